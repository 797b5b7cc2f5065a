"""Does an output follow its input? Pure tensor logic, shared by the judge and task makers.

`allclose` against the reference on each input alone cannot tell an honest kernel from one
that ignores its input when every reference output sits inside the tolerance of one value:
a mean loss over millions of uniform draws (1.000 ± 0.003), a softmax over 393 216 columns
(every value near 2.5e-6, far below atol). What such a kernel cannot fake is the variation:
across different inputs its outputs must change the way the reference's do, measured
against the output's own scale, not against atol.

- `outputs_vary`: whether outputs from different inputs differ at all beyond tolerance (a
  task whose output does not vary cannot tell a constant from a kernel);
- `follows`: whether a candidate's outputs reproduce the reference's variation;
- `sits_at_scale`: whether they sit where the reference's do, at the output's own scale: an
  offset far below atol moves nothing, yet is many times a small output's size;
- `follows_closely`: whether an output of a few values (a loss) follows the task's draws up to
  rounding: a reduction sampled by strata follows them too, only less closely.

Both take leaves as tensors of the same shape per input; `sample` cuts a leaf down to a
fixed, secret set of positions, so that many inputs' worth stays small.
"""

from __future__ import annotations

import math
from typing import Any

import torch

SAMPLE_ELEMENTS = 1 << 16  # per output leaf: enough for norms, small enough to keep many
FOLLOW = 0.5  # the candidate's variation may miss at most this share of the reference's
NOISE = 8.0  # a variation within this many times the reference's rounding noise is noise
PERTURB_ULPS = 4.0  # the inputs' perturbation that measures that noise
#: Values per input below which an output is not held to its own scale: the rounding noise
#: of a few values, measured once, can fall well under its typical size by chance.
SCALE_ELEMENTS = 64
#: How far, in ulps of float32 (or the dtype written, if coarser) at the output's scale, an
#: honest reduction to a few values may round off the reference: a single float32
#: accumulator over a million values is off by up to 2e-5 of the sum, a GPU tree or atomic
#: sum by about 1e-6; a sixteenth of a million uniform draws misses their mean by 1e-3.
ROUNDING_ULPS = 512.0

RULE = "the output does not depend on the input the way the reference's does"
SCALE_RULE = "the output is wrong at its own scale (inside atol, off by over half its size)"
RULES = (RULE, SCALE_RULE)


def _leaves(tree: Any) -> list[Any]:
    if isinstance(tree, torch.Tensor):
        return [tree]
    if isinstance(tree, (list, tuple)):
        return [leaf for item in tree for leaf in _leaves(item)]
    if isinstance(tree, dict):
        return [leaf for key in sorted(tree, key=str) for leaf in _leaves(tree[key])]
    return [tree]


def _stack(values: list[torch.Tensor]) -> torch.Tensor:
    """Inputs x elements, in float64, with positions non-finite in any input dropped."""
    rows = torch.stack([v.detach().reshape(-1).to("cpu", torch.float64) for v in values])
    return rows if all_finite(rows) else rows[:, torch.isfinite(rows).all(dim=0)]


def all_finite(values: torch.Tensor) -> bool:
    """Whether every value is finite, read from one sum: a NaN or an infinity makes the sum
    non-finite, and a sum that overflows only sends the caller to the per-element test.
    The checks run on the host, where a test and a copy of every element took two thirds
    of `Tracker.findings` (2 CPU cores, 2026-12-06)."""
    return math.isfinite(float(values.sum()))


def variation(rows: torch.Tensor) -> tuple[float, float]:
    """(RMS of each input's deviation from the mean over inputs, RMS of the values): how much
    the output moves between inputs, and the output's own scale."""
    if rows.numel() == 0:
        return 0.0, 0.0
    moved = rows - rows.mean(dim=0, keepdim=True)
    return float(moved.square().mean().sqrt()), float(rows.square().mean().sqrt())


def leaf_varies(values: list[Any], atol: float, rtol: float, noise: Any = None) -> bool:
    """One leaf over several inputs: differs beyond allclose somewhere, or moves by more than
    `rtol` of its own scale (small outputs count, whatever atol says); with `noise` (the
    leaf on the first input moved by a few ulps, see `perturbed`), by more than `NOISE`
    times what rounding alone moves it."""
    first = values[0]
    if not isinstance(first, torch.Tensor):
        return any(v != first for v in values[1:])
    if any(not isinstance(v, torch.Tensor) or v.shape != first.shape for v in values[1:]):
        return True
    if not (first.is_floating_point() or first.is_complex()):
        return any(not torch.equal(v, first) for v in values[1:])
    if first.is_complex():
        values = [torch.view_as_real(v) for v in values]
        first = values[0]
    rounding = 0.0
    if isinstance(noise, torch.Tensor) and noise.shape == first.shape:
        rounding = 2 * variation(_stack([first, noise]))[0]  # RMS of their difference
    for v in values[1:]:
        v = v.to(first.device)
        if not torch.allclose(v, first, atol=atol, rtol=rtol, equal_nan=True) and (
                float(torch.nan_to_num((v - first).abs()).max()) > NOISE * rounding):
            return True
    moved, scale = variation(_stack(values))
    return moved > max(rtol * scale, NOISE * rounding)


def outputs_vary(outputs: list, atol: float, rtol: float, noise: Any = None) -> bool:
    """True when outputs (pytrees of tensors, one per input) produced from different inputs
    differ from each other beyond tolerance, relative to their own scale as well as by
    `atol`/`rtol`: the output depends on the input, so a constant cannot pass for it.

    `noise`, optional: the output for the first input moved by a few ulps (`perturbed`);
    then a variation no larger than rounding makes (a mean of group-normalised values is
    zero up to rounding, whatever the input) does not count."""
    if len(outputs) < 2:
        return False
    per_input = [_leaves(out) for out in outputs]
    if any(len(leaves) != len(per_input[0]) for leaves in per_input):
        return True
    noisy = _leaves(noise) if noise is not None else []
    if len(noisy) != len(per_input[0]):
        noisy = [None] * len(per_input[0])
    return any(leaf_varies(list(values), atol, rtol, n)
               for values, n in zip(zip(*per_input, strict=True), noisy, strict=True))


def positions(numel: int, seed: int) -> torch.Tensor | None:
    """Secret positions to sample a leaf of `numel` elements at; None: take them all."""
    if numel <= SAMPLE_ELEMENTS:
        return None
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(0, numel, (SAMPLE_ELEMENTS,), generator=gen)


def sample(leaf: torch.Tensor, where: torch.Tensor | None) -> torch.Tensor:
    """The leaf's values at `where` (all when None), on the host, in float64."""
    flat = leaf.detach().reshape(-1)
    if flat.is_complex():
        flat = torch.view_as_real(flat).reshape(-1)
    if where is not None:
        flat = flat[where.to(flat.device)]
    return flat.to("cpu", torch.float64)


def follows(reference: list[torch.Tensor], candidate: list[torch.Tensor],
            floor: float, noise: float = 0.0) -> str | None:
    """None when the candidate's values (one sample per input) move with the reference's;
    otherwise why not. Only a reference that itself moves by more than `floor` of its own
    scale is held to it (below that, the variation is inside the tolerance's resolution),
    and by more than `NOISE` times its rounding noise (`noise`, RMS: an output that is
    mathematically constant, a mean of group-normalised values, moves by rounding alone,
    and an honest kernel rounds otherwise); the candidate may miss that noise too."""
    rows_r, rows_c = _aligned(reference, candidate)
    moved, scale = variation(rows_r)
    if rows_r.numel() == 0 or moved <= max(floor * scale, NOISE * noise):
        return None
    missed = _missed(rows_r, rows_c)
    if missed <= FOLLOW * moved + NOISE * noise:
        return None
    return (f"across {len(reference)} inputs the reference moves by {moved:.3g} RMS (its "
            f"values {scale:.3g} RMS); the candidate's moves miss it by {missed:.3g}")


def follows_closely(reference: list[torch.Tensor], candidate: list[torch.Tensor],
                    dtype: torch.dtype, noise: float = 0.0) -> str | None:
    """None unless the output has fewer than `SCALE_ELEMENTS` values per input and the
    candidate's moves across the task's draws miss the reference's by more than rounding:
    `ROUNDING_ULPS` of `dtype` (float32 at the finest) at the output's scale, or `NOISE`
    times the measured noise. A loss over uniform draws moves mostly with its cheap inputs
    (the ±1 targets' balance); a kernel reading those whole and a sixteenth of the rest
    follows that to a tenth, inside `FOLLOW`, but not to rounding. The noise of a single
    value, measured once, is mostly zero: the ulps are the floor."""
    rows_r, rows_c = _aligned(reference, candidate)
    if rows_r.numel() == 0 or rows_r.shape[1] >= SCALE_ELEMENTS:
        return None
    moved, scale = variation(rows_r)
    eps = max(torch.finfo(dtype).eps, torch.finfo(torch.float32).eps)
    rounding = max(ROUNDING_ULPS * eps * scale, NOISE * noise)
    missed = _missed(rows_r, rows_c)
    if moved <= rounding or missed <= rounding:
        return None
    return (f"across {len(reference)} inputs the reference moves by {moved:.3g} RMS; the "
            f"candidate's moves miss it by {missed:.3g}, more than rounding ({rounding:.3g})")


def _missed(rows_r: torch.Tensor, rows_c: torch.Tensor) -> float:
    """RMS of the difference between the candidate's and the reference's deviations from
    their own means over inputs: what of the reference's moves the candidate misses."""
    delta_r = rows_r - rows_r.mean(dim=0, keepdim=True)
    delta_c = rows_c - rows_c.mean(dim=0, keepdim=True)
    return float((delta_c - delta_r).square().mean().sqrt())


def sits_at_scale(reference: list[torch.Tensor], candidate: list[torch.Tensor],
                  noise: float | None) -> str | None:
    """None when the candidate's values (one sample per input) are within `FOLLOW` of the
    reference's own scale (RMS of their difference against RMS of the reference's values);
    otherwise why not. Allclose bounds the error by atol, which for a softmax over a long
    row is thousands of times its values. Only a reference whose values stand more than
    `NOISE` times above its rounding noise is held to it (a mean of group-normalised values
    is rounding alone, which an honest kernel rounds otherwise), only where that noise was
    measured and seen (`noise` None or 0: not; a TF32 convolution can round the inputs'
    move away) and over `SCALE_ELEMENTS` values or more."""
    if not noise:  # none measured, or none seen: inputs the task rounds coarser (TF32)
        return None
    rows_r, rows_c = _aligned(reference, candidate)
    if rows_r.numel() == 0 or rows_r.shape[1] < SCALE_ELEMENTS:
        return None
    _, scale = variation(rows_r)
    if scale <= NOISE * noise:
        return None
    missed = float((rows_c - rows_r).square().mean().sqrt())
    if missed <= FOLLOW * scale:
        return None
    return (f"over {len(reference)} inputs the candidate's values miss the reference's by "
            f"{missed:.3g} RMS, the reference's own values being {scale:.3g} RMS")


def _aligned(reference: list[torch.Tensor],
             candidate: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """Both as inputs x elements, keeping positions finite in every input on both sides."""
    rows_r = torch.stack([r.reshape(-1).to(torch.float64) for r in reference])
    rows_c = torch.stack([c.reshape(-1).to(torch.float64) for c in candidate])
    if all_finite(rows_r) and all_finite(rows_c):
        return rows_r, rows_c
    keep = (torch.isfinite(rows_r) & torch.isfinite(rows_c)).all(dim=0)
    return rows_r[:, keep], rows_c[:, keep]


def written_grid(candidate: list[torch.Tensor],
                 reference: list[torch.Tensor]) -> torch.dtype | None:
    """The half-precision dtype (bf16, else fp16) on whose grid every value the candidate
    wrote lies (at positions finite on both sides) while the reference's do not, where the
    candidate wrote more than one value: a kernel writing that dtype, whose resolution
    bounds the variation it can show."""
    rows_r, rows_c = _aligned(reference, candidate)
    if rows_c.numel() == 0 or bool((rows_c == rows_c[0]).all()):
        return None
    for dtype in (torch.bfloat16, torch.float16):
        if (torch.equal(rows_c.to(dtype).to(torch.float64), rows_c)
                and not torch.equal(rows_r.to(dtype).to(torch.float64), rows_r)):
            return dtype
    return None


def perturbed(inputs: list[Any], seed: int) -> list[Any]:
    """Float inputs moved by a few ulps at random: the reference's output on them differs
    from its output on the inputs by its rounding noise (and the function's sensitivity at
    that scale), the level below which no variation means anything."""
    out = []
    for i, x in enumerate(inputs):
        if isinstance(x, torch.Tensor) and x.is_floating_point() and x.numel():
            gen = torch.Generator(device=x.device).manual_seed(seed + i)
            moved = torch.randn(x.shape, generator=gen, device=x.device, dtype=x.dtype)
            x = moved.mul_(PERTURB_ULPS * torch.finfo(x.dtype).eps).mul_(x).add_(x)
        out.append(x)
    return out
