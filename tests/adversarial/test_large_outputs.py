"""Timed calls whose outputs are large are checked one at a time: the candidate's checked
call against eager's output computed for its seed before the candidate's next call, so at
most one copy of a multi-GB output is held in any worker."""

from __future__ import annotations

from cudaopt.judge import Status
from cudaopt.judge.checks.streams import STALE

from .harness import HERE, judge

LARGE = HERE / "large"
OPTIONS = dict(allow=["*"], trials=2, derived_trials=0, profile=True,
               breakdown=False)


def test_an_honest_candidate_passes_the_checks_made_call_by_call() -> None:
    verdict = judge("honest", LARGE, **OPTIONS)
    assert verdict.status is Status.OK, (verdict.error, verdict.violations)
    assert verdict.correct and verdict.timing_rounds >= 2
    assert verdict.phases_s.get("timing.checks", 0) > 0  # outputs were compared


def test_a_stale_timed_output_is_refused_before_the_next_call() -> None:
    verdict = judge("stale_after_ten", LARGE, **OPTIONS)
    assert verdict.status is Status.VIOLATION and verdict.reward == -1
    assert any(v.startswith(STALE) and "a timed call's output was wrong" in v
               for v in verdict.violations), verdict.violations
