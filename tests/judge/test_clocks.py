"""The credited time never excludes work the call caused: the slower clock wins when the
clocks disagree beyond the margin and the spread of what each subtracts."""

from __future__ import annotations

from cudaopt.judge.timing.crosscheck import credit, credited_clock, cross_check
from cudaopt.judge.timing.timer import summarize
from cudaopt.judge.verdict.verdict import Timing


def _rounds(events_ms: float, host_ms: float, wall_ms: float) -> list[dict[str, list[float]]]:
    jitter = [1.0, 1.01, 0.99, 1.02, 0.98]
    return [{"candidate": [events_ms * j for j in jitter],
             "candidate_host": [host_ms * j for j in jitter],
             "candidate_wall": [wall_ms * j for j in jitter],
             "gap": [0.01 * j for j in jitter], "overhead": [0.2 * j for j in jitter]}
            for _ in range(4)]


def test_honest_clocks_leave_the_events_standing() -> None:
    assert credited_clock(_rounds(0.040, 0.050, 0.240), 0.05) is None


def test_work_hidden_from_the_events_is_credited_by_the_host_clock() -> None:
    rounds = _rounds(0.010, 0.100, 0.290)  # a racy light kernel: events see the launch only
    clock, why = credited_clock(rounds, 0.05)
    assert clock == "candidate_host" and "host clock" in why
    credit(rounds, clock)
    assert all(0.085 < t < 0.1 for r in rounds for t in r["candidate"])


def test_the_judges_own_clock_is_a_cross_check_not_a_credit() -> None:
    """Its overhead differs between the candidate's process and the baselines', so crediting
    it would charge honest kernels; a clock forged by far is a violation instead."""
    rounds = _rounds(0.010, 0.020, 1.200)  # the candidate's process clocks patched
    assert credited_clock(rounds, 0.05) is None
    events = [x for r in rounds for x in r["candidate"]]
    timing = Timing(**summarize(events, [x for r in rounds for x in r["candidate_host"]]))
    found = cross_check(timing, [x for r in rounds for x in r["candidate_wall"]],
                        [x for r in rounds for x in r["overhead"]])
    assert any("timing cross-check failed" in v for v in found), found
