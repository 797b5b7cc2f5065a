"""Does an output follow its input? Pure tensor logic, shared by the judge and task makers.

`allclose` against the reference on each input alone cannot tell an honest kernel from one
that ignores its input when every reference output sits inside the tolerance of one value:
a mean loss over millions of uniform draws (1.000 ± 0.003), a softmax over 393 216 columns
(every value near 2.5e-6, far below atol). What such a kernel cannot fake is the variation:
across different inputs its outputs must change the way the reference's do, measured
against the output's own scale, not against atol.

- `outputs_vary`: whether outputs from different inputs differ at all beyond tolerance (a
  task whose output does not vary cannot tell a constant from a kernel);
- `follows`: whether a candidate's outputs reproduce the reference's variation.

Both take leaves as tensors of the same shape per input; `sample` cuts a leaf down to a
fixed, secret set of positions, so that many inputs' worth stays small.
"""

from __future__ import annotations

from typing import Any

import torch

SAMPLE_ELEMENTS = 1 << 18  # per output leaf: enough for norms, small enough to keep many
FOLLOW = 0.5  # the candidate's variation may miss at most this share of the reference's

RULE = "the output does not depend on the input the way the reference's does"


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
    return rows[:, torch.isfinite(rows).all(dim=0)]


def variation(rows: torch.Tensor) -> tuple[float, float]:
    """(RMS of each input's deviation from the mean over inputs, RMS of the values): how much
    the output moves between inputs, and the output's own scale."""
    if rows.numel() == 0:
        return 0.0, 0.0
    moved = rows - rows.mean(dim=0, keepdim=True)
    return float(moved.square().mean().sqrt()), float(rows.square().mean().sqrt())


def leaf_varies(values: list[Any], atol: float, rtol: float) -> bool:
    """One leaf over several inputs: differs beyond allclose somewhere, or moves by more than
    `rtol` of its own scale (small outputs count, whatever atol says)."""
    first = values[0]
    if not isinstance(first, torch.Tensor):
        return any(v != first for v in values[1:])
    if not (first.is_floating_point() or first.is_complex()):
        return any(not torch.equal(v, first) for v in values[1:])
    if first.is_complex():
        values = [torch.view_as_real(v) for v in values]
        first = values[0]
    if any(not torch.allclose(v.to(first.device), first, atol=atol, rtol=rtol, equal_nan=True)
           for v in values[1:]):
        return True
    moved, scale = variation(_stack(values))
    return moved > rtol * scale


def outputs_vary(outputs: list, atol: float, rtol: float) -> bool:
    """True when outputs (pytrees of tensors, one per input) produced from different inputs
    differ from each other beyond tolerance, relative to their own scale as well as by
    `atol`/`rtol`: the output depends on the input, so a constant cannot pass for it."""
    if len(outputs) < 2:
        return False
    per_input = [_leaves(out) for out in outputs]
    if any(len(leaves) != len(per_input[0]) for leaves in per_input):
        return True
    return any(leaf_varies(list(values), atol, rtol) for values in zip(*per_input, strict=True))


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
            rtol: float) -> str | None:
    """None when the candidate's values (one sample per input) move with the reference's;
    otherwise why not. Only a reference that itself moves by more than `rtol` of its own
    scale is held to it: below that, the variation is inside the tolerance's resolution."""
    rows_r, rows_c = _aligned(reference, candidate)
    moved, scale = variation(rows_r)
    if rows_r.numel() == 0 or moved <= rtol * scale:
        return None
    delta_r = rows_r - rows_r.mean(dim=0, keepdim=True)
    delta_c = rows_c - rows_c.mean(dim=0, keepdim=True)
    missed = float((delta_c - delta_r).square().mean().sqrt())
    if missed <= FOLLOW * moved:
        return None
    return (f"across {len(reference)} inputs the reference moves by {moved:.3g} RMS (its "
            f"values {scale:.3g} RMS); the candidate's moves miss it by {missed:.3g}")


def _aligned(reference: list[torch.Tensor],
             candidate: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """Both as inputs x elements, keeping positions finite in every input on both sides."""
    rows_r = torch.stack([r.reshape(-1).to(torch.float64) for r in reference])
    rows_c = torch.stack([c.reshape(-1).to(torch.float64) for c in candidate])
    keep = (torch.isfinite(rows_r) & torch.isfinite(rows_c)).all(dim=0)
    return rows_r[:, keep], rows_c[:, keep]
