"""Verification inputs beyond `get_inputs()`: the task's own draws, restructured.

Fresh draws from one distribution cannot tell a kernel from a constant when the output is
a statistic of that distribution (a mean loss over millions of uniform draws is 1.000 ±
0.003). Inputs of the same shapes and dtypes but another structure can: other scales and
offsets, sparse or spiky values, a block of the tensor rescaled, sorted or clustered
values, rows mixed from two draws. Each is derived from the task's own draws, so what an
input means survives: integer and boolean tensors (indices, masks) are only permuted or
mixed row by row between two draws; integral-valued floats (±1 targets, one-hot rows) are
also sorted; rows that sum to one stay distributions (powers and masks are renormalised);
symmetric matrices stay symmetric and positive definite (positive scales, D·A·D, a larger
diagonal, convex mixes, P·A·Pᵀ). Where the reference still fails or goes non-finite on such
an input, the judge skips it and says so.

`plan` (the parent, with the judgement's secret randomness) picks the transforms and their
seeds; `derive` (both workers, identically) applies them on the device. KernelBench inputs
reach 16 GiB and two workers derive them on one device, so a transform holds at most its
output beside its input: tests and sorts run in chunks, in place where they can.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

MAGNITUDE = ("scale", "rowscale", "offset", "sparse", "spiky", "block")
ORDER = ("sort", "cluster", "mix", "permute")
MIX_MAX_BYTES = 1 << 30  # inputs larger than this are permuted, not mixed with a second draw
_CHUNK = 1 << 26  # elements tested at once: temporaries of multi-GB inputs stay small
_SORT_CHUNK = 1 << 22  # elements sorted at once (a sort's buffers are several times these)
_Rand = Callable[[], float]


def plan(rand: _Rand, seed: Callable[[], int], count: int = 3) -> list[dict[str, Any]]:
    """`count` variants (a few extra forward calls, not dozens), each one or two magnitude
    transforms (the last also one of order), so that across three a rescaling, a few
    outliers and a rescaled block always appear: a constant, a sub-sample and an expected
    value each meet an input they cannot follow."""
    required = ["scale" if rand() < 0.5 else "rowscale", "spiky", "block"]
    variants = []
    for i in range(count):
        kinds = [required[i]] if i < len(required) else []
        extra = [k for k in MAGNITUDE if k not in kinds and k not in required]
        if rand() < 0.5 or not kinds:
            kinds.append(extra[int(rand() * len(extra))])
        if i == count - 1:
            kinds.append(ORDER[int(rand() * len(ORDER))])
        variants.append({"kinds": kinds, "seed": seed(), "mix_seed": seed()})
    return variants


def describe(variant: dict[str, Any]) -> str:
    return " + ".join(variant["kinds"])


def derive(inputs: list[Any], variant: dict[str, Any],
           other: Callable[[int], list[Any]]) -> list[Any]:
    """The inputs restructured by `variant`; `other(seed)` draws a second set for mixing.
    Shapes, dtypes and devices never change; non-tensors pass through. Consumes `inputs`
    (its entries are dropped as they are replaced, so a drawn tensor's memory is free
    before the next transform runs)."""
    kinds = list(variant["kinds"])
    if "mix" in kinds and _bytes(inputs) > MIX_MAX_BYTES:  # a second draw would not fit
        kinds[kinds.index("mix")] = "permute"
    second = other(variant["mix_seed"]) if "mix" in kinds else [None] * len(inputs)
    out = []
    for i, y in enumerate(second):
        x, inputs[i] = inputs[i], None
        # a broadcast (overlapping) input cannot take new values: it stays as drawn
        if (isinstance(x, torch.Tensor) and x.numel() > 0 and x.device.type != "meta"
                and _dense(x)):
            gen = torch.Generator(device=x.device).manual_seed(variant["seed"] + 7919 * i)
            layout = torch.empty_strided(x.size(), x.stride(), dtype=x.dtype, device="meta")
            derived, x = x, None
            for kind in kinds:
                derived = _apply(kind, derived, y, gen)
            x = _like_layout(layout, derived)
        out.append(x)
    return out


def _bytes(inputs: list[Any]) -> int:
    return sum(x.numel() * x.element_size() for x in inputs if isinstance(x, torch.Tensor))


def _like_layout(layout: torch.Tensor, derived: torch.Tensor) -> torch.Tensor:
    """The derived values in the drawn tensor's strides (`layout`, a meta tensor: a task may
    hand over a transposed view)."""
    if derived.stride() == layout.stride():
        return derived
    return torch.empty_strided(layout.size(), layout.stride(), dtype=layout.dtype,
                               device=derived.device).copy_(derived)


def _dense(x: torch.Tensor) -> bool:
    """Whether every element has memory of its own (no stride-0 broadcast, no overlap)."""
    order = sorted((s, n) for s, n in zip(x.stride(), x.shape, strict=True) if n > 1)
    expected = 1
    for stride, size in order:
        if stride != expected:
            return False
        expected *= size
    return True


def kind_of(x: torch.Tensor) -> str:
    """What a tensor's values mean, as far as the transforms must respect it."""
    if not x.is_floating_point():
        return "discrete"
    if _every(x, lambda c: c == c.round()):
        return "discrete"
    if x.dim() >= 2 and x.shape[-1] == x.shape[-2] > 1 and _symmetric(x):
        return "symmetric"
    if _every(x, lambda c: c >= 0):
        if x.dim() >= 1 and x.shape[-1] > 1 and bool(
                torch.allclose(x.sum(-1, dtype=torch.float32),
                               torch.ones((), device=x.device), atol=1e-3)):
            return "simplex"
        return "nonneg"
    return "real"


def _symmetric(x: torch.Tensor) -> bool:
    """Every matrix equal to its transpose; a corner block first (an image is square too),
    then a chunk of matrices at a time, so no temporary is larger than a chunk."""
    corner = x[..., :64, :64]
    if not bool(torch.allclose(corner, corner.mT, rtol=1e-5, atol=1e-6)):
        return False
    matrices = x.reshape(-1, x.shape[-2], x.shape[-1])
    per_chunk = max(1, _CHUNK // (x.shape[-1] * x.shape[-2]))
    return all(bool(torch.allclose(m, m.mT, rtol=1e-5, atol=1e-6))
               for m in matrices.split(per_chunk))


def _every(x: torch.Tensor, test: Callable[[torch.Tensor], torch.Tensor]) -> bool:
    flat = x.reshape(-1) if x.is_contiguous() else x.contiguous().reshape(-1)
    return all(bool(test(flat[i:i + _CHUNK]).all()) for i in range(0, flat.numel(), _CHUNK))


def _apply(kind: str, x: torch.Tensor, y: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    meaning = kind_of(x)
    if meaning == "discrete":
        return _ORDER_ONLY.get(kind, _keep)(x, y, gen, meaning)
    if meaning == "symmetric":
        return _SYMMETRIC.get(kind, _keep)(x, y, gen, meaning)
    out = _TRANSFORMS[kind](x, y, gen, meaning)
    if meaning == "simplex":
        out = out / out.sum(-1, keepdim=True).clamp_min(torch.finfo(out.dtype).tiny)
    return out


def _u(gen: torch.Generator, device: torch.device, lo: float = 0.0, hi: float = 1.0) -> float:
    return lo + (hi - lo) * float(torch.rand((), generator=gen, device=device))


def _factor(gen: torch.Generator, device: torch.device) -> float:
    """A factor well away from 1 in either direction: e^±[0.7, 2.3], about 2x to 10x."""
    magnitude = _u(gen, device, 0.7, 2.3)
    return math.exp(magnitude if _u(gen, device) < 0.5 else -magnitude)


def _rows_shape(x: torch.Tensor) -> tuple[int, ...]:
    return (x.shape[0],) + (1,) * (x.dim() - 1) if x.dim() else ()


def _keep(x: torch.Tensor, y: torch.Tensor, gen: torch.Generator, meaning: str) -> torch.Tensor:
    return x


def _scale(x, y, gen, meaning):
    c = _factor(gen, x.device)
    return x.pow(c) if meaning == "simplex" else x * c


def _rowscale(x, y, gen, meaning):
    if x.dim() == 0:
        return _scale(x, y, gen, meaning)
    exps = torch.empty(_rows_shape(x), device=x.device).uniform_(-2.3, 2.3, generator=gen)
    if meaning == "simplex":
        return x.pow(exps.exp().to(x.dtype))
    return x * exps.exp().to(x.dtype)


def _offset(x, y, gen, meaning):
    spread = float(x.float().std()) if x.numel() > 1 else abs(float(x)) or 1.0
    b = _u(gen, x.device, 0.5, 2.0) * (spread or 1.0)
    if meaning != "real" or _u(gen, x.device) < 0.5:
        return x + b
    return x - b


def _copy(x: torch.Tensor) -> torch.Tensor:
    """A contiguous copy the transform may change in place: one copy, even of a view."""
    return x.clone() if x.is_contiguous() else x.contiguous()


def _sparse(x, y, gen, meaning):
    share = _u(gen, x.device, 0.05, 0.2)
    out = _copy(x)
    flat = out.view(-1)
    for i in range(0, flat.numel(), _CHUNK):  # the mask a chunk at a time
        part = flat[i:i + _CHUNK]
        part.mul_(torch.rand(part.numel(), generator=gen, device=x.device) < share)
    if meaning == "simplex":  # every row keeps its largest value: still a distribution
        top = x == x.amax(dim=-1, keepdim=True)
        out = torch.where(top, x, out)
    return out


def _spiky(x, y, gen, meaning):
    """About one element in a thousand (at least one) made an outlier 20-50x the typical
    magnitude. The positions are made unique: a write to a repeated index keeps whichever
    value a CUDA device stores last, so the two workers would hold different inputs."""
    flat = _copy(x).view(-1)
    n = max(1, flat.numel() // 1000)
    where = torch.randint(0, flat.numel(), (n,), generator=gen, device=x.device).unique()
    n = where.numel()
    typical = _mean_abs(x)
    size = torch.empty(n, device=x.device).uniform_(20.0, 50.0, generator=gen) * typical
    if meaning == "real":
        size = size * (torch.randint(0, 2, (n,), generator=gen, device=x.device) * 2 - 1)
    flat[where] = flat[where] + size.to(x.dtype)
    return flat.reshape(x.shape)


def _mean_abs(x: torch.Tensor) -> float:
    """The typical magnitude, 1.0 for an all-zero tensor; a reduction, no temporary."""
    return float(torch.linalg.vector_norm(x, 1, dtype=torch.float32)) / x.numel() or 1.0


def _block(x, y, gen, meaning):
    """One contiguous stretch of 10-40% of the elements (in memory order) rescaled."""
    flat = _copy(x).view(-1)
    length = max(1, int(flat.numel() * _u(gen, x.device, 0.1, 0.4)))
    start = int(_u(gen, x.device) * (flat.numel() - length + 1))
    flat[start:start + length] *= _factor(gen, x.device)
    return flat.reshape(x.shape)


def _sort(x, y, gen, meaning):
    """Each row sorted, a few rows at a time: a CUDA sort's indices and buffers take about
    four times what it sorts (2 GiB for 64M floats on an H200)."""
    if not x.dim():
        return x
    out = _copy(x)
    rows = out.view(-1, out.shape[-1])
    step = max(1, _SORT_CHUNK // max(1, rows.shape[1]))
    for i in range(0, rows.shape[0], step):
        part = rows[i:i + step]
        part.copy_(part.sort(dim=-1).values)
    return out


def _cluster(x, y, gen, meaning):
    """Values snapped to a coarse grid: few distinct values, many ties."""
    step = (float(x.float().std()) if x.numel() > 1 else 1.0) / 2 or 1.0
    return (x / step).round_().mul_(step)


def _mix(x, y, gen, meaning):
    """Rows (slices along dim 0) taken from one draw or the other."""
    if x.dim() == 0:
        return y
    pick = torch.rand(_rows_shape(x), generator=gen, device=x.device) < 0.5
    return torch.where(pick, y, x)


def _permute(x, y, gen, meaning):
    if x.dim() == 0:
        return x
    return x[torch.randperm(x.shape[0], generator=gen, device=x.device)]


def _sym_rowscale(x, y, gen, meaning):
    """D·A·D with D positive diagonal: still symmetric, still positive definite if A was."""
    shape = (*x.shape[:-1], 1)
    d = torch.empty(shape, device=x.device).uniform_(-1.2, 1.2, generator=gen).exp().to(x.dtype)
    return x * d * d.mT


def _sym_spiky(x, y, gen, meaning):
    """A larger diagonal, on a few matrices' entries: symmetric, more definite."""
    n = x.shape[-1]
    boost = torch.empty(*x.shape[:-1], device=x.device).uniform_(0.0, 20.0, generator=gen)
    boost = boost * (torch.rand(boost.shape, generator=gen, device=x.device) < 0.1)
    typical = _mean_abs(x)
    return x + torch.diag_embed(boost * typical * n).to(x.dtype)


def _sym_mix(x, y, gen, meaning):
    a = _u(gen, x.device, 0.2, 0.8)
    return a * x + (1 - a) * y


def _sym_permute(x, y, gen, meaning):
    p = torch.randperm(x.shape[-1], generator=gen, device=x.device)
    return x[..., p, :][..., :, p]


def _sym_scale(x, y, gen, meaning):
    return x * abs(_factor(gen, x.device))


_TRANSFORMS = {"scale": _scale, "rowscale": _rowscale, "offset": _offset, "sparse": _sparse,
               "spiky": _spiky, "block": _block, "sort": _sort, "cluster": _cluster,
               "mix": _mix, "permute": _permute}
_ORDER_ONLY = {"mix": _mix, "permute": _permute, "sort": _sort}
_SYMMETRIC = {"scale": _sym_scale, "rowscale": _sym_rowscale, "spiky": _sym_spiky,
              "mix": _sym_mix, "permute": _sym_permute}
