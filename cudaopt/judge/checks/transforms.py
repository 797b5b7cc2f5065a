"""The transforms behind `variants`, one input tensor at a time: `TRANSFORMS` for real,
non-negative and probability values, `ORDER_ONLY` for discrete ones (indices, masks, ±1
targets: only moved, never given new values), `SYMMETRIC` for symmetric positive-definite
matrices (kept so). Each takes (the tensor, a second draw for mixing, the generator, what
the values mean) and returns a tensor of the same shape and dtype; large inputs are worked
on in chunks, in place where they can.
"""

from __future__ import annotations

import math

import torch

CHUNK = 1 << 26  # elements tested at once: temporaries of multi-GB inputs stay small
SORT_CHUNK = 1 << 22  # elements sorted at once (a sort's buffers are several times these)
STRATA_SLICES = 3  # secret slices raised along each dimension (see `_strata`)


def _u(gen: torch.Generator, device: torch.device, lo: float = 0.0, hi: float = 1.0) -> float:
    return lo + (hi - lo) * float(torch.rand((), generator=gen, device=device))


def _factor(gen: torch.Generator, device: torch.device) -> float:
    """A factor well away from 1 in either direction: e^±[0.7, 2.3], about 2x to 10x."""
    magnitude = _u(gen, device, 0.7, 2.3)
    return math.exp(magnitude if _u(gen, device) < 0.5 else -magnitude)


def _rows_shape(x: torch.Tensor) -> tuple[int, ...]:
    return (x.shape[0],) + (1,) * (x.dim() - 1) if x.dim() else ()


def keep(x: torch.Tensor, y: torch.Tensor, gen: torch.Generator, meaning: str) -> torch.Tensor:
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
    for i in range(0, flat.numel(), CHUNK):  # the mask a chunk at a time
        part = flat[i:i + CHUNK]
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


def _strata(x, y, gen, meaning):
    """A few secret slices along every dimension (three rows, three columns, ...) raised far
    above the rest: together one to three times the tensor's own mass, each a third to a
    seventh of the one before. A kernel reading a fixed part along some dimension (one
    column block in 16, every other row) and scaling it up either misses them or weighs them
    many times over, at no sampling rate right; rescaled rows, a rescaled stretch of memory
    or outliers are seen alike through any such part. Positions are drawn with replacement
    (a permutation of a long dimension would not fit) and raised one after another, so both
    workers agree. Where a value overflows the dtype (fp16), the reference goes non-finite
    and the judge skips the input."""
    out = _copy(x)
    typical = _mean_abs(x)
    for dim, size in enumerate(x.shape):
        if size < 2:
            continue
        where = torch.randint(0, size, (STRATA_SLICES,), generator=gen, device=x.device)
        ratios = torch.empty(STRATA_SLICES, device=x.device).uniform_(1.0, 2.0, generator=gen)
        shares = (-ratios.cumsum(0)).exp()  # each a third to a seventh of the one before
        shares *= _u(gen, x.device, 1.0, 3.0) * size / float(shares.sum())
        if meaning == "real":
            shares *= torch.randint(0, 2, (STRATA_SLICES,), generator=gen, device=x.device) * 2 - 1
        for index, share in zip(where.tolist(), shares.tolist(), strict=True):
            out.select(dim, index).add_(share * typical)
    return out


def _sort(x, y, gen, meaning):
    """Each row sorted, a few rows at a time: a CUDA sort's indices and buffers take about
    four times what it sorts (2 GiB for 64M floats on an H200)."""
    if not x.dim():
        return x
    out = _copy(x)
    rows = out.view(-1, out.shape[-1])
    step = max(1, SORT_CHUNK // max(1, rows.shape[1]))
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


TRANSFORMS = {"scale": _scale, "rowscale": _rowscale, "offset": _offset, "sparse": _sparse,
              "spiky": _spiky, "block": _block, "strata": _strata, "sort": _sort,
              "cluster": _cluster, "mix": _mix, "permute": _permute}
ORDER_ONLY = {"mix": _mix, "permute": _permute, "sort": _sort}
SYMMETRIC = {"scale": _sym_scale, "rowscale": _sym_rowscale, "spiky": _sym_spiky,
              "mix": _sym_mix, "permute": _sym_permute}
