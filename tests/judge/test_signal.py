"""The output-follows-input logic on plain tensors: what varies, what follows."""

from __future__ import annotations

import torch

from cudaopt.judge import outputs_vary
from cudaopt.judge.building.loading import host_math
from cudaopt.judge.checks.signal import (
    _aligned,
    _stack,
    follows,
    follows_closely,
    perturbed,
    positions,
    sample,
    sits_at_scale,
    written_grid,
)


def _softmax_rows(seed: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.softmax(torch.randn(2, 100_000, generator=gen), dim=1)


def test_a_long_softmax_varies_although_every_value_is_below_atol() -> None:
    outs = [_softmax_rows(s) for s in range(3)]
    assert max(float(o.max()) for o in outs) < 1e-2 / 10
    assert outputs_vary(outs, atol=1e-2, rtol=1e-2)


def test_constant_and_identical_outputs_do_not_vary() -> None:
    assert not outputs_vary([torch.ones(3), torch.ones(3), torch.ones(3)], 1e-2, 1e-2)
    assert not outputs_vary([torch.tensor(1.0), torch.tensor(1.0 + 1e-4)], 1e-2, 1e-2)
    assert not outputs_vary([torch.zeros(5)], 1e-2, 1e-2)


def test_nested_outputs_and_integer_leaves() -> None:
    a = (torch.ones(2), {"i": torch.tensor([1, 2])})
    b = (torch.ones(2), {"i": torch.tensor([1, 3])})
    assert outputs_vary([a, b], 1e-2, 1e-2)
    assert not outputs_vary([a, a], 1e-2, 1e-2)
    assert outputs_vary([torch.ones(2), torch.ones(3)], 1e-2, 1e-2)


def test_zeros_do_not_follow_a_small_softmax_but_a_bf16_copy_does() -> None:
    where = positions(200_000, seed=7)
    refs = [sample(_softmax_rows(s), where) for s in range(4)]
    zeros = [torch.zeros_like(r) for r in refs]
    assert follows(refs, zeros, floor=1e-2) is not None
    bf16 = [r.to(torch.bfloat16).to(torch.float64) for r in refs]
    assert follows(refs, bf16, floor=1e-2) is None


def test_a_constant_does_not_follow_a_loss_whose_inputs_change_scale() -> None:
    refs = [torch.tensor([v]) for v in (1.001, 0.998, 3.2, 0.35)]
    assert follows(refs, [torch.tensor([1.0])] * 4, floor=1e-2) is not None
    assert follows(refs, [r + 1e-3 for r in refs], floor=1e-2) is None


def test_variation_inside_the_tolerance_resolution_is_not_demanded() -> None:
    """Fresh draws of a mean loss alone move it by 0.3%: no kernel is held to that."""
    refs = [torch.tensor([v]) for v in (1.001, 0.998, 1.003)]
    assert follows(refs, [torch.tensor([1.0])] * 3, floor=1e-2) is None


def _group_norm_mean(x: torch.Tensor, chunks: int) -> torch.Tensor:
    """Mean of group-normalised values: zero whatever the input, up to rounding (KernelBench
    level2/23_Conv3d_GroupNorm_Mean); `chunks` changes the summation order."""
    normed = torch.nn.functional.group_norm(x, 2)
    return torch.stack([c.sum() for c in normed.reshape(-1).chunk(chunks)]).sum() / x.numel()


def test_an_output_that_is_rounding_noise_neither_varies_nor_binds_an_honest_kernel() -> None:
    draws = [torch.randn(4, 8, 64, generator=torch.Generator().manual_seed(s))
             for s in range(5)]
    refs = [_group_norm_mean(x, 1).reshape(1) for x in draws]
    honest = [_group_norm_mean(x, 7).reshape(1) for x in draws]
    noise = _group_norm_mean(perturbed([draws[0]], seed=3)[0], 1).reshape(1)
    assert outputs_vary(refs, 1e-2, 1e-2)  # relative to its own scale, without the noise
    assert not outputs_vary(refs, 1e-2, 1e-2, noise=noise)
    level = float((noise - refs[0]).abs())
    assert follows(refs, honest, floor=1e-2, noise=level) is None
    assert follows(refs, [torch.zeros(1)] * 5, floor=1e-2, noise=level) is None


def test_a_small_output_is_held_to_its_own_scale_where_it_stands_above_rounding() -> None:
    where = positions(200_000, seed=5)
    refs = [sample(_softmax_rows(s), where) for s in range(4)]
    offset = [r + 1e-3 for r in refs]  # follows every move, a tenth of atol, 30x the values
    assert follows(refs, offset, floor=1e-2) is None
    assert sits_at_scale(refs, offset, noise=1e-12) is not None
    bf16 = [r.to(torch.bfloat16).to(torch.float64) for r in refs]
    assert sits_at_scale(refs, bf16, noise=1e-12) is None
    assert sits_at_scale(refs, offset, noise=None) is None  # no noise measured: not held
    draws = [torch.randn(4, 8, 64, generator=torch.Generator().manual_seed(s))
             for s in range(5)]
    zero = [torch.stack([_group_norm_mean(x + i, 1) for i in range(64)]) for x in draws]
    honest = [torch.stack([_group_norm_mean(x + i, 7) for i in range(64)]) for x in draws]
    moved = perturbed([draws[0]], seed=3)[0]
    noise = torch.stack([_group_norm_mean(moved + i, 1) for i in range(64)]) - zero[0]
    level = float(noise.square().mean().sqrt())  # rounding alone, as the judge measures it
    assert sits_at_scale(zero, honest, noise=level) is None
    exact = [torch.zeros(64)] * 5  # computed exactly: zero, where float32 rounds
    assert sits_at_scale(zero, exact, noise=level) is None
    assert sits_at_scale(zero, exact, noise=level / 1e3) is not None  # the noise spares it
    assert sits_at_scale(zero, exact, noise=0.0) is None  # no rounding seen: not held
    assert sits_at_scale([z[:1] for z in zero], [e[:1] for e in exact], noise=level / 1e3) is None


def test_the_dtype_a_candidate_writes_is_read_from_its_values() -> None:
    gen = torch.Generator().manual_seed(3)
    refs = [torch.randn(256, generator=gen, dtype=torch.float64) for _ in range(4)]
    as_bf16 = [r.to(torch.bfloat16).to(torch.float64) for r in refs]
    as_fp16 = [r.to(torch.float16).to(torch.float64) for r in refs]
    assert written_grid(as_bf16, refs) == torch.bfloat16
    assert written_grid(as_fp16, refs) == torch.float16
    assert written_grid(refs, refs) is None  # finer than either grid
    assert written_grid(as_bf16, as_bf16) is None  # the reference writes bf16 itself
    one = torch.ones(256, dtype=torch.float64)
    assert written_grid([one] * 4, refs) is None  # a constant shows no dtype at all


def _hinge_draws(rows: int = 256, columns: int = 1024) -> list[list[torch.Tensor]]:
    gens = [torch.Generator().manual_seed(s) for s in range(5)]
    return [[torch.rand(rows, columns, generator=g),
             torch.randint(0, 2, (columns,), generator=g).float() * 2 - 1] for g in gens]


def _hinge(p: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    return torch.clamp(1 - p * t, min=0).mean().reshape(1)


def _stratified(p: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """Every target, one column in 16 of the predictions, weighted by the signs' shares."""
    per_column = torch.clamp(1 - p[:, ::16] * t[::16], min=0).mean(dim=0)
    share = (t > 0).float().mean()
    up = t[::16] > 0
    return (share * per_column[up].mean() + (1 - share) * per_column[~up].mean()).reshape(1)


def _naive_float32(p: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """One float32 accumulator over the rows' sums: rounded otherwise, and worse."""
    total = torch.zeros((), dtype=torch.float32)
    for row in torch.clamp(1 - p * t, min=0).sum(dim=1):
        total = total + row
    return (total / p.numel()).reshape(1)


def test_a_loss_sampled_by_strata_follows_its_draws_but_not_to_rounding() -> None:
    draws = _hinge_draws()
    refs = [_hinge(*d) for d in draws]
    sampled = [_stratified(*d) for d in draws]
    assert follows(refs, sampled, floor=3e-5) is None  # a tenth of the moves: under half
    assert follows_closely(refs, sampled, torch.float32) is not None
    for honest in (lambda p, t: _hinge(p.double(), t.double()).float(), _naive_float32):
        assert follows_closely(refs, [honest(*d) for d in draws], torch.float32) is None
    bf16 = [r.to(torch.bfloat16).float() for r in refs]  # written in bf16: held at its grid
    assert follows_closely(refs, bf16, torch.bfloat16) is None
    assert follows_closely(refs, bf16, torch.float32) is not None


def test_only_few_valued_outputs_that_move_beyond_rounding_are_held_to_rounding() -> None:
    gen = torch.Generator().manual_seed(2)
    refs = [torch.rand(64, generator=gen) for _ in range(4)]  # 64 values: not a few
    assert follows_closely(refs, [r + 1e-3 * torch.rand(64) for r in refs],
                           torch.float32) is None
    still = [torch.tensor([1.0 + k * 1e-7]) for k in range(4)]  # moves by rounding alone
    assert follows_closely(still, [torch.tensor([1.0])] * 4, torch.float32) is None


def test_the_judges_host_math_runs_on_one_thread_on_a_gpu_and_gives_the_threads_back() -> None:
    """On a GPU the signal check and the comparisons run on one thread (a team of threads
    on a busy host waits for its slowest member at every operator); on a CPU, where the
    outputs themselves are compared on the host, the judge's threads stay."""
    before = torch.get_num_threads()
    with host_math(True):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with host_math(False):
        assert torch.get_num_threads() == before


def test_positions_not_finite_on_either_side_are_dropped_and_finite_ones_all_kept() -> None:
    """One sum tells the finite case (nothing to drop) from the rest: a NaN or an infinity
    drops its position on both sides; finite values whose sum overflows keep theirs."""
    ref = [torch.tensor([1.0, 2.0, 3.0, 4.0]), torch.tensor([2.0, 3.0, 4.0, 5.0])]
    cand = [torch.tensor([1.0, float("nan"), 3.0, 4.0]),
            torch.tensor([2.0, 3.0, float("-inf"), 5.0])]
    rows_r, rows_c = _aligned(ref, cand)
    assert rows_r.tolist() == [[1.0, 4.0], [2.0, 5.0]] and rows_c.tolist() == rows_r.tolist()
    rows_r, _ = _aligned(ref, ref)
    assert rows_r.shape == (2, 4)
    huge = [torch.tensor([1e308, 1e308], dtype=torch.float64)] * 2
    assert _aligned(huge, huge)[0].shape == (2, 2)  # the sum overflows, no value is lost
    assert _stack(huge).shape == (2, 2) and _stack(cand).shape == (2, 2)
