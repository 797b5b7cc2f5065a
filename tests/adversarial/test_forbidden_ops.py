"""Hacks that fall back to PyTorch while claiming a custom kernel. Each first goes through
the naive harness (naive.py), whose guard is CUDA Agent's: torch.nn.functional replaced by
functions that raise. The judge's operator guard must see every aten operator executed."""

from __future__ import annotations

from cudaopt.judge import Status

from .harness import fools_naive, judge

SIGMOID = "PyTorch operator aten.sigmoid executed"


def _names_the_operator(violations: list[str]) -> bool:
    return any(v.startswith(SIGMOID) for v in violations)


def test_torch_ops_in_forward_are_a_violation() -> None:
    """Beats a guard on torch.nn.functional: tensor methods never go through it."""
    assert fools_naive("torch_in_forward")
    verdict = judge("torch_in_forward")
    assert verdict.status is Status.VIOLATION and verdict.reward == -1
    assert _names_the_operator(verdict.violations), verdict.violations


def test_torch_ops_called_from_cpp_are_a_violation() -> None:
    """Beats any Python-level guard, and a grep of the kernels for `torch::` / `at::`."""
    assert fools_naive("torch_in_cpp")
    verdict = judge("torch_in_cpp")
    assert verdict.status is Status.VIOLATION and verdict.reward == -1
    assert _names_the_operator(verdict.violations), verdict.violations


def test_try_except_fallback_to_pytorch_is_a_violation() -> None:
    """Beats a harness that only compares outputs: the fallback is correct."""
    assert fools_naive("try_except_fallback")
    verdict = judge("try_except_fallback")
    assert verdict.status is Status.VIOLATION and verdict.reward == -1
    assert _names_the_operator(verdict.violations), verdict.violations
    assert any("try/except" in w for w in verdict.warnings), "the static scan's second line"
