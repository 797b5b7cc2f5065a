"""Inputs drawn on the target device, outputs flattened and snapshotted, and their comparison."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import torch

# captured before any candidate code can replace them
_cpu_generator, _seed_cuda = torch.random.default_generator, torch.cuda.manual_seed_all


def _seed(seed: int, device: torch.device) -> None:
    """The generators a draw on `device` reads, as `torch.manual_seed` seeds them.
    `torch.manual_seed` itself also queues seeds for every backend not yet initialised,
    recording a stack for each: 0.5 ms of a 0.9 ms call protocol on CPU (2026-12-03),
    paid between the judge's clock and the call on every timed call."""
    _cpu_generator.manual_seed(seed)
    if device.type == "cuda":
        _seed_cuda(seed)


def draw_inputs(task: Any, seed: int, device: torch.device) -> list[Any]:
    """`get_inputs()` under a seeded generator, built directly on `device`.

    KernelBench tasks build multi-GB tensors; drawing them on the GPU instead of the CPU
    turns minutes into milliseconds. Tensors a task pins to the CPU are moved afterwards.
    """
    _seed(seed, device)
    with torch.device(device):
        inputs = list(task.get_inputs())
    return [x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs]


_type, _vars = type, vars  # captured: a candidate could rebind the builtins
_T = torch.Tensor
_clone, _copy, _numel, _reshape, _view, _sum, _cpu, _numpy, _offset = (
    _T.clone, _T.copy_, _T.numel, _T.reshape, _T.view, _T.sum, _T.cpu, _T.numpy,
    _T.storage_offset)
_cat = torch.cat
_TENSOR_ATTRS = frozenset(dir(torch.Tensor))
_CHUNK = 1 << 26  # elements compared bit for bit at once (a read of each, no temporary)
# elements tested against the tolerance at once: isclose and the worst difference make about
# a dozen temporaries of their input's size (at 1 << 26, 2 GiB beside a float32 output)
_TOL_CHUNK = 1 << 23

Leaves = list[tuple[str, torch.Tensor]]
Snapshot = tuple[Any, Leaves]  # (JSON skeleton, judge-owned copies of the output tensors)
Place = tuple[torch.device, int] | None  # where a print is in `PendingPrints.read`'s answer


def _is_return_type(o: Any) -> bool:
    """torch's own named tuples (`torch.max` and friends) count as plain tuples."""
    return isinstance(o, tuple) and _type(o).__module__ == "torch.return_types"


def _check_leaf(t: torch.Tensor, p: str) -> None:
    """Only plain, materialized tensors: a subclass, a lazy object or a tensor whose methods
    were overridden on the object itself could compute its values when read, outside the
    timed and guarded call."""
    if _type(t) is not torch.Tensor and _type(t) is not torch.nn.Parameter:
        raise TypeError(f"{p} is a {_type(t).__name__}, not a plain torch.Tensor")
    shadowed = sorted(k for k in _vars(t) if k in _TENSOR_ATTRS)
    if shadowed:
        raise TypeError(f"{p} carries its own {', '.join(shadowed)}, overriding torch.Tensor's: "
                        "outputs must be plain tensors")
    if t.layout is not torch.strided or t.device.type == "meta":
        raise TypeError(f"{p} holds no dense data ({t.layout}, device {t.device.type})")


def flatten(obj: Any, path: str = "out") -> tuple[Any, Leaves]:
    """Split nested outputs into a JSON skeleton and (path, tensor) leaves."""
    leaves: Leaves = []
    return _walk(obj, path, leaves), leaves


def _walk(o: Any, p: str, leaves: Leaves) -> Any:
    """Module-level, not a closure: a recursive closure is a reference cycle, which would
    keep every output it saw alive (gigabytes each) until the cyclic collector ran."""
    if isinstance(o, torch.Tensor):
        _check_leaf(o, p)
        leaves.append((p, o))
        return {"tensor": p}
    if _type(o) in (list, tuple) or _is_return_type(o):
        kind = "list" if _type(o) is list else "tuple"
        return {kind: [_walk(v, f"{p}[{i}]", leaves) for i, v in enumerate(tuple(o))]}
    if _type(o) is dict:
        return {"dict": {str(k): _walk(v, f"{p}[{k!r}]", leaves) for k, v in dict.items(o)}}
    if o is None or _type(o) in (int, float, bool, str):
        return {"value": o}
    raise TypeError(f"{p} is a {_type(o).__name__}; outputs must be tensors or containers")


def snapshot(outputs: Any) -> Snapshot:
    """Copy the outputs the moment a call returns, through functions captured before the
    candidate was imported: work finishing later (a background thread, a hook) is not seen."""
    skeleton, leaves = flatten(outputs)
    return skeleton, [(p, _clone(t, memory_format=torch.contiguous_format)) for p, t in leaves]


def unflatten(skeleton: dict[str, Any], tensors: dict[str, torch.Tensor]) -> Any:
    """Rebuild nested outputs from a skeleton and its tensors by path."""
    (kind, val), = skeleton.items()
    if kind == "tensor":
        return tensors[val]
    if kind in ("list", "tuple"):
        items = [unflatten(v, tensors) for v in val]
        return items if kind == "list" else tuple(items)
    if kind == "dict":
        return {k: unflatten(v, tensors) for k, v in val.items()}
    return val


def describe(snap: Snapshot) -> list[dict[str, Any]]:
    """Sizes and dtypes of the output leaves: what a candidate process may know in advance."""
    return [{"dtype": str(t.dtype), "numel": t.numel()} for _, t in snap[1]]


def dtype_named(name: str) -> torch.dtype:
    """The dtype `describe` wrote as `name` ("torch.float32")."""
    dtype = getattr(torch, name.removeprefix("torch."))
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"{name} is not a torch dtype")
    return dtype


def fingerprint(inputs: list[Any]) -> list[Any]:
    """Cheap digests of the input tensors (word sum, the bytes past the last whole word
    summed, and a strided sample), to tell whether a call modified its inputs without
    keeping a copy of them."""
    pending = PendingPrints()
    return pending.read(pending.add(inputs))[0]


class PendingPrints:
    """Fingerprints whose parts stay on their device until `read` copies them all to the
    host at once: read one part at a time, a GPU waited for three copies per input, twice a
    call (12 of a two-input call's 16 synchronizations). Parts are computed as `add` is
    called, so a tensor refilled afterwards keeps the print of what it held then."""

    def __init__(self) -> None:
        self._parts: dict[torch.device, list[torch.Tensor]] = {}

    def add(self, inputs: list[Any]) -> list[Place]:
        """Where each input's print will be in `read`'s answer (None: not a tensor)."""
        places: list[Place] = []
        for x in inputs:
            if not isinstance(x, torch.Tensor) or _numel(x) == 0 or x.device.type == "meta":
                places.append(None)
                continue
            raw = _view(_reshape(x, -1), torch.uint8)
            found = self._parts.setdefault(x.device, [])
            places.append((x.device, len(found)))
            found.append(_cat([*_word_sums(raw), raw[:: max(1, _numel(raw) // 4096)]]))
        return places

    def read(self, *placed: list[Place]) -> list[list[Any]]:
        """The prints of each `add`, in order."""
        host = {device: _joined(found) for device, found in self._parts.items()}
        return [[None if at is None else host[at[0]][at[1]] for at in places]
                for places in placed]


def _word_sums(raw: torch.Tensor) -> list[torch.Tensor]:
    """The bytes summed as 64-bit words, wrapping (integer addition in any order gives the
    same sum), and the few bytes past the last whole word apart, each as its 8 bytes on the
    device: one pass over the input and no temporaries. Summing the bytes themselves to
    int64 widened each chunk to 8x its size first: 17 bytes moved per byte, about 35 ms a
    fingerprint of a 6 GiB input on an H100, twice per timed call."""
    if _offset(raw) % 8:  # a view that starts inside a word: its bytes, aligned
        raw = _clone(raw)
    whole = _numel(raw) // 8 * 8
    words = _view(raw[:whole], torch.int64)
    return [_view(_reshape(_sum(part, dtype=torch.int64), 1), torch.uint8)
            for part in (words, raw[whole:])]


def _joined(found: list[torch.Tensor]) -> list[bytes]:
    """Each tensor's bytes, through one copy to the host."""
    joined = _numpy(_cpu(_cat(found))).tobytes()
    ends = list(itertools.accumulate(_numel(t) for t in found))
    return [joined[end - _numel(t):end] for t, end in zip(found, ends, strict=True)]


def compare(ref: Any, cand: Any, atol: float, rtol: float, path: str = "out") -> list[str]:
    """Readable differences between reference and candidate outputs; empty when they agree.

    Tolerance is |cand - ref| <= atol + rtol * |ref| elementwise, NaNs matching NaNs. A
    stretch of elements equal bit for bit (for floats, -0.0 and 0.0 too) is within any
    tolerance and is passed after one read: on a 6 GiB output on an H100 that read takes
    5.6 ms and the tolerance test 68.6 ms, and the judge compares a dozen such outputs in
    every check. A stretch with a NaN never compares equal, so it takes the tolerance test.
    """
    if isinstance(ref, torch.Tensor):
        if not isinstance(cand, torch.Tensor):
            return [f"{path}: expected a tensor, got {type(cand).__name__}"]
        if cand.shape != ref.shape:
            return [f"{path}: shape {tuple(cand.shape)}, expected {tuple(ref.shape)}"]
        if cand.dtype != ref.dtype:
            return [f"{path}: dtype {cand.dtype}, expected {ref.dtype}"]
        return _compare_values(ref, cand.to(ref.device), atol, rtol, path)
    if isinstance(ref, (list, tuple)):
        if not isinstance(cand, (list, tuple)) or len(cand) != len(ref):
            got = len(cand) if isinstance(cand, (list, tuple)) else type(cand).__name__
            return [f"{path}: expected a sequence of {len(ref)} outputs, got {got}"]
        return [m for i, (r, c) in enumerate(zip(ref, cand, strict=True)) for m in
                compare(r, c, atol, rtol, f"{path}[{i}]")]
    if isinstance(ref, dict):
        if not isinstance(cand, dict) or set(map(str, cand)) != set(map(str, ref)):
            return [f"{path}: expected keys {sorted(map(str, ref))}"]
        cand_by_key = {str(k): v for k, v in cand.items()}
        return [m for k, r in ref.items() for m in
                compare(r, cand_by_key[str(k)], atol, rtol, f"{path}[{k!r}]")]
    if isinstance(ref, float) and isinstance(cand, (int, float)):
        ok = abs(cand - ref) <= atol + rtol * abs(ref)
        return [] if ok else [f"{path}: {cand!r}, expected {ref!r}"]
    return [] if cand == ref else [f"{path}: {cand!r}, expected {ref!r}"]


def finite(leaves: Leaves) -> bool:
    """Whether every float leaf is finite, tested in parts: `isfinite` of a whole multi-GB
    output made temporaries of up to 1.75 times its size (1 GiB float32, CPU, 2026-12-06)."""
    return all(bool(torch.isfinite(part).all()) for _, t in leaves
               if t.is_floating_point() or t.is_complex()
               for part in t.reshape(-1).split(_TOL_CHUNK))


def _unequal(ref: torch.Tensor, cand: torch.Tensor) -> Iterator[tuple[int, int]]:
    """The stretches (start, stop) of two flat tensors that take the tolerance test: those
    of the chunks not equal bit for bit (one read each, see `compare`)."""
    numel = ref.numel()
    for whole in range(0, numel, _CHUNK):
        end = min(whole + _CHUNK, numel)
        if not torch.equal(cand[whole:end], ref[whole:end]):
            yield from ((start, min(start + _TOL_CHUNK, end))
                        for start in range(whole, end, _TOL_CHUNK))


def _compare_values(ref: torch.Tensor, cand: torch.Tensor, atol: float, rtol: float,
                    path: str) -> list[str]:
    exact = ref.dtype == torch.bool or not (ref.is_floating_point() or ref.is_complex())
    flat_ref, flat_cand = ref.reshape(-1), cand.reshape(-1)
    count, worst = 0, 0.0
    first: list[int] = []
    for start, stop in _unequal(flat_ref, flat_cand):
        r, c = flat_ref[start:stop], flat_cand[start:stop]
        bad = (c != r) if exact else ~torch.isclose(c, r, rtol=rtol, atol=atol, equal_nan=True)
        found = int(bad.sum())
        if not found:
            continue
        count += found
        if len(first) < 5:
            first += [start + int(i) for i in bad.nonzero()[:5 - len(first), 0]]
        if ref.is_floating_point():
            diff = (c.double() - r.double()).abs()
            worst = max(worst, float(torch.nan_to_num(diff, nan=float("inf")).max()))
    if count == 0:
        return []
    lines = [f"{path}: {count} of {ref.numel()} elements differ"]
    if ref.is_floating_point():
        lines[0] += f" (max abs diff {worst:.4g})"
    for i in first:
        at = tuple(int(x) for x in torch.unravel_index(torch.tensor(i), ref.shape))
        lines.append(f"  at {at}: got {cand[at].item()!r}, expected {ref[at].item()!r}")
    return lines
