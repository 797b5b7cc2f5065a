"""Verification inputs beyond `get_inputs()`: the task's own draws, restructured.

Fresh draws from one distribution cannot tell a kernel from a constant when the output is
a statistic of that distribution (a mean loss over millions of uniform draws is 1.000 ±
0.003). Inputs of the same shapes and dtypes but another structure can: other scales and
offsets, sparse or spiky values, a block of the tensor rescaled, a few secret slices along
every dimension raised (strata a sampler may skip), sorted or clustered values, rows mixed
from two draws. Each is derived from the task's own draws, so what an
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

from collections.abc import Callable
from typing import Any

import torch

from cudaopt.judge.checks.transforms import CHUNK, ORDER_ONLY, SYMMETRIC, TRANSFORMS, keep

MAGNITUDE = ("scale", "rowscale", "offset", "sparse", "spiky", "block", "strata")
ORDER = ("sort", "cluster", "mix", "permute")
MIX_MAX_BYTES = 1 << 30  # inputs larger than this are permuted, not mixed with a second draw
_Rand = Callable[[], float]


def plan(rand: _Rand, seed: Callable[[], int], count: int = 3) -> list[dict[str, Any]]:
    """`count` variants (a few extra forward calls, not dozens), each one to three magnitude
    transforms (the last also one of order), so that across three a rescaling, a few
    outliers with raised secret strata, and a rescaled block always appear: a constant, a
    sub-sample, a reduction sampled by strata and an expected value each meet an input they
    cannot follow. The strata come last among the magnitudes, so no mask thins them."""
    required = ["scale" if rand() < 0.5 else "rowscale", "spiky", "block"]
    variants = []
    for i in range(count):
        kinds = [required[i]] if i < len(required) else []
        extra = [k for k in MAGNITUDE if k not in required and k != "strata"]
        if rand() < 0.5 or not kinds:
            kinds.append(extra[int(rand() * len(extra))])
        if kinds[0] == "spiky":
            kinds.append("strata")
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
    per_chunk = max(1, CHUNK // (x.shape[-1] * x.shape[-2]))
    return all(bool(torch.allclose(m, m.mT, rtol=1e-5, atol=1e-6))
               for m in matrices.split(per_chunk))


def _every(x: torch.Tensor, test: Callable[[torch.Tensor], torch.Tensor]) -> bool:
    flat = x.reshape(-1) if x.is_contiguous() else x.contiguous().reshape(-1)
    return all(bool(test(flat[i:i + CHUNK]).all()) for i in range(0, flat.numel(), CHUNK))


def _apply(kind: str, x: torch.Tensor, y: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    meaning = kind_of(x)
    if meaning == "discrete":
        return ORDER_ONLY.get(kind, keep)(x, y, gen, meaning)
    if meaning == "symmetric":
        return SYMMETRIC.get(kind, keep)(x, y, gen, meaning)
    out = TRANSFORMS[kind](x, y, gen, meaning)
    if meaning == "simplex":
        out = out / out.sum(-1, keepdim=True).clamp_min(torch.finfo(out.dtype).tiny)
    return out
