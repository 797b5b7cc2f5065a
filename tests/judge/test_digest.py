"""The commitment a worker sends with each call's reply binds every byte of its outputs,
their order, dtypes, shapes and structure (see `digest`)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from cudaopt.judge.timing.bench import Bench
from cudaopt.judge.workers import digest as digest_module
from cudaopt.judge.workers import digest_burst
from cudaopt.judge.workers.digest import digest
from cudaopt.judge.workers.tensors import fingerprint


def _one(t: torch.Tensor) -> str:
    return digest({"tensor": "out"}, {"out": t})


# a few words (hashed as they are), a tree alone (an odd value out at one of its levels), and
# the chain with a tail of one word
@pytest.mark.parametrize("numel", [3, 4096, 300_001, (1 << 24) + 3])
def test_any_change_of_one_element_or_of_the_order_changes_the_digest(numel: int) -> None:
    x = torch.randn(numel)
    assert _one(x) == _one(x.clone())
    for i in (numel // 2, numel - 3):  # inside the chain or tree; the last whole word
        nudged = x.clone()
        nudged[i] = torch.nextafter(nudged[i], torch.tensor(10.0))  # one ulp
        assert _one(nudged) != _one(x)
    swapped = x.clone()
    swapped[0], swapped[1] = x[1], x[0]
    assert _one(swapped) != _one(x)


@pytest.mark.parametrize("words", [4097, 4159, 8191, 8192, 8193, 12_345, 200_003])
def test_a_cpu_folds_the_tree_block_by_block_to_the_same_value(
        words: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of 64 words here (of 2^18 in use): the odd words at each level, a last block
    longer than the others, and levels past the blocks' own all end where the whole tree
    does."""
    x = torch.randint(-(2**62), 2**62, (words,), dtype=torch.int64)
    whole = _one(x)
    monkeypatch.setattr(digest_module, "_BLOCK_WORDS", 64)
    assert _one(x) == whole
    monkeypatch.setattr(digest_module, "TOP", 16)  # more levels than a block has
    monkeypatch.setattr(digest_module, "_DEVICE_TOP", 16)  # all of them in the tree
    blocked = _one(x)
    monkeypatch.setattr(digest_module, "_BLOCK_WORDS", 1 << 40)
    assert _one(x) == blocked


def test_the_structure_dtype_and_shape_count_too() -> None:
    x = torch.randn(4, 6)
    assert _one(x) != _one(x.reshape(6, 4))
    assert _one(x) != _one(x.view(torch.int32))
    pair = {"tuple": [{"tensor": "a"}, {"tensor": "b"}]}
    assert digest(pair, {"a": x, "b": x}) != digest({"list": pair["tuple"]}, {"a": x, "b": x})


def test_a_strided_view_digests_as_its_contiguous_copy() -> None:
    x = torch.randn(300, 500).t()
    assert _one(x) == _one(x.contiguous())


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", [False, True])
def test_a_device_tensor_digests_as_its_host_copy(kernel: bool,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """On a GPU through tensor operations, and through the chain's kernel (which a tensor
    this small would not take): the host's value either way, moved by one ulp."""
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    if kernel:
        monkeypatch.setattr(digest_module, "KERNEL_MIN_WORDS", 0)
    x = torch.randn((1 << 24) + 2001, device="cuda")  # over the tree's limit: the chain
    assert _one(x) == _one(x.cpu())
    if kernel:
        from cudaopt.judge.workers import digest_kernel  # imports Triton

        assert digest_kernel.trusted(x.device)
    x[1 << 20] = torch.nextafter(x[1 << 20], torch.tensor(10.0, device="cuda"))
    assert _one(x) == _one(x.cpu())


@pytest.mark.parametrize("start", [0, 1, 3])  # views that begin inside a 64-bit word
def test_an_input_fingerprint_moves_with_any_change_of_one_byte(start: int) -> None:
    """What tells that a call modified its inputs in place (`tensors.fingerprint`)."""
    x = torch.randint(0, 256, (100_013,), dtype=torch.uint8)
    view = x[start:]
    before = fingerprint([view])
    assert fingerprint([view.clone()]) == before
    view[50_001] ^= 1  # a byte no strided sample reads
    assert fingerprint([view]) != before


@pytest.mark.parametrize("refill", [False, True])
def test_a_call_that_writes_its_input_is_named_by_the_next_prep(refill: bool) -> None:
    """The last call's inputs are fingerprinted before the next draw refills them in place
    (`Bench.prep`, both prints read back at once), so a write shows however they go on; a
    draw that fails (a derived input the judge could not make) leaves the next one sound."""
    failing = [False]

    def draw() -> list[object]:
        if failing[0]:
            raise RuntimeError("no such input")
        return [torch.randn(64, 33), 5, torch.randn(7)[1:]]

    bench = Bench(SimpleNamespace(get_inputs=draw), torch.device("cpu"))
    assert bench.prep(1, False, None) == []
    bench.go(lambda a, n, b: a.sum() + b.sum())
    assert bench.prep(2, refill, "kept") == []
    assert "kept" in bench.kept
    written = bench.inputs[2]
    bench.go(lambda a, n, b: b.mul_(2))
    assert bench.prep(3, refill, None) == ["candidate modified input 2 in place"]
    assert (bench.inputs[2] is written) == refill  # refilled: the same tensor, new values
    bench.go(lambda a, n, b: a.add_(1))
    assert bench.settle(None) == ["candidate modified input 0 in place"]
    failing[0] = True
    with pytest.raises(RuntimeError):
        bench.prep(4, refill, None)
    failing[0] = False
    assert bench.prep(5, refill, None) == []


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_a_burst_digested_together_gives_each_call_its_own_digest(
        device: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """`digests` folds the outputs of a burst as stacks: each value must be the one `digest`
    gives the call alone on the host (the reference re-digests one copy at a time), through
    runs broken by another structure, an uneven or oversized output and the stack's byte
    limit."""
    monkeypatch.setattr(digest_burst, "BATCH_BYTES", 3 * 4 * 20_002)  # three such a run
    torch.manual_seed(0)
    pair = {"tuple": [{"tensor": "out.0"}, {"tensor": "out.1"}]}
    calls = []
    for shape in [(20_002,)] * 5 + [(8,), (8,), (0,), (3, 4097)] + [(20_002,)] * 2:
        calls.append(({"tensor": "out"}, {"out": torch.randn(shape)}))
    calls.insert(3, (pair, {"out.0": torch.randn(9_000), "out.1": torch.randint(
        0, 9, (4_096, 2), dtype=torch.int64)}))
    calls.insert(5, ({"tensor": "out"}, {"out": torch.randn(20_003)}))  # a word and a half
    monkeypatch.setattr(digest_module, "TREE_MAX_WORDS", 10_001)
    calls.append(({"tensor": "out"}, {"out": torch.randn(20_004)}))  # down the chain
    alone = [digest(*call) for call in calls]
    on_device = [(skeleton, {path: t.to(device) for path, t in tensors.items()})
                 for skeleton, tensors in calls]
    assert digest_burst.digests(on_device) == alone
    assert len(set(alone)) == len(alone)
    runs = digest_burst._stackable(on_device)
    assert [run for run in runs if run[1] - run[0] > 1] == [(0, 3), (7, 9), (11, 13)]
    assert len(runs) == 10


@pytest.mark.parametrize("words", [257, 1_001, 4_096, 4_097, 10_001])
def test_an_output_alone_folds_its_last_levels_on_the_host_as_a_stack_does_on_its_device(
        words: int) -> None:
    """Alone, an output's tree stops at `_DEVICE_TOP` values a lane on its device and the
    host folds the rest (`_host_levels`); in a burst the stack folds down to `TOP` on the
    device: the values must be the same, or the reference would refuse honest copies."""
    calls = [({"tensor": "out"}, {"out": torch.randint(-2**62, 2**62, (words,))})
             for _ in range(2)]
    assert digest_burst.digests(calls) == [digest(*call) for call in calls]
    folded = digest_module.tree(calls[0][1]["out"])
    assert digest_module._host_levels(calls[0][1]["out"].numpy().view("uint64")) == (
        folded.numpy().tobytes())
