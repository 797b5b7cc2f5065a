"""Stand-in for `cudaopt.judge.outputs_vary` until the judge's own test is merged."""

from __future__ import annotations

from typing import Any


def outputs_vary(outputs: list, atol: float, rtol: float) -> bool:
    """True when some output differs from the first beyond the tolerance."""
    import torch

    def leaves(out: Any) -> list[Any]:
        if isinstance(out, torch.Tensor):
            return [out]
        if isinstance(out, (list, tuple)):
            return [leaf for item in out for leaf in leaves(item)]
        return []

    first = leaves(outputs[0])
    return any(len(leaves(o)) != len(first) or not all(
        a.shape == b.shape and torch.allclose(a.float(), b.float(), atol=atol, rtol=rtol)
        for a, b in zip(first, leaves(o), strict=False)) for o in outputs[1:])
