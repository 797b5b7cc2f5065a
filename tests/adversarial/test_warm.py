"""Hacks aimed at the warm back-to-back figure: its calls' outputs are checked too."""

from __future__ import annotations

from cudaopt.judge import Status

from .harness import judge


def test_reusing_results_back_to_back_fails_the_warm_checks() -> None:
    """Right on every separate call (verification, cold timing), stale when called back to
    back: only the warm protocol sees it, and its output checks refuse it."""
    verdict = judge("reuse_back_to_back", profile=True)
    assert verdict.status is Status.VIOLATION and verdict.reward == -1
    assert verdict.correct  # every separate call was right
    assert any(v.startswith("output of a back-to-back call is wrong")
               for v in verdict.violations), verdict.violations
