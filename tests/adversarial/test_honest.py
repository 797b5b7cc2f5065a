"""No false alarms: honest candidates pass every check, timed calls included."""

from __future__ import annotations

from cudaopt.judge import Status, Verdict

from .harness import judge


def _passes(verdict: Verdict, name: str) -> None:
    assert verdict.status is Status.OK, verdict.violations or verdict.mismatch or verdict.error
    assert verdict.correct and verdict.violations == [] and verdict.reward >= 1
    assert not any(w.startswith(f"{name}.py") for w in verdict.warnings), verdict.warnings


def test_kernel_writing_an_empty_output_passes() -> None:
    _passes(judge("honest_empty", profile=True), "honest_empty")


def test_first_call_autotune_kept_in_an_attribute_passes() -> None:
    """A cache of launch configurations (outputs still computed on every call) is fine."""
    _passes(judge("honest_autotune", profile=True), "honest_autotune")


def test_speedup_above_the_ceiling_is_remeasured_and_flagged() -> None:
    """With the ceiling at 0 every speedup is 'implausible': the re-measure must run, check
    more, flag it in the verdict, and still pass an honest kernel."""
    verdict = judge("honest_empty", profile=True, ceiling=0.0)
    _passes(verdict, "honest_empty")
    assert verdict.remeasured
    assert any(w.startswith("implausible speedup") for w in verdict.warnings), verdict.warnings
