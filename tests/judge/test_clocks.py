"""The credited time never excludes work the call caused: the slower clock wins when the
clocks disagree beyond the margin and the spread of what each subtracts."""

from __future__ import annotations

import statistics

from cudaopt.judge.timing.crosscheck import (
    PROCESS_ALLOWANCE,
    credit,
    credit_window,
    credited_clock,
    cross_check,
    settle,
)
from cudaopt.judge.timing.timer import summarize
from cudaopt.judge.verdict.verdict import Status, Verdict


def _rounds(events_ms: float, host_ms: float, wall_ms: float) -> list[dict[str, list[float]]]:
    jitter = [1.0, 1.01, 0.99, 1.02, 0.98]
    return [{"candidate": [events_ms * j for j in jitter],
             "candidate_host": [host_ms * j for j in jitter],
             "candidate_window": [wall_ms * j for j in jitter],
             "gap": [0.01 * j for j in jitter], "overhead": [0.2 * j for j in jitter],
             "protocol": [0.21 * j for j in jitter]}
            for _ in range(4)]


def test_honest_clocks_leave_the_events_standing() -> None:
    assert credited_clock(_rounds(0.040, 0.050, 0.240), 0.05) is None


def test_work_hidden_from_the_events_is_credited_by_the_host_clock() -> None:
    rounds = _rounds(0.010, 0.100, 0.290)  # a racy light kernel: events see the launch only
    clock, why = credited_clock(rounds, 0.05)
    assert clock == "candidate_host" and "host clock" in why
    credit(rounds, clock)
    assert all(0.085 < t < 0.1 for r in rounds for t in r["candidate"])


def test_honest_windows_leave_the_events_standing() -> None:
    """Noise on the judge's clock reaches single calls, not the median: it only ever adds."""
    rounds = _rounds(0.040, 0.050, 0.250)  # window = events + the baselines' protocol cost
    assert credit_window(rounds, 0.05) is None
    assert 0.039 < statistics.median(t for r in rounds for t in r["candidate"]) < 0.042


def test_a_clock_forged_below_python_is_credited_from_the_judges_own() -> None:
    """A candidate that makes its own clocks report 70% of each call (rewritten in C, behind
    the same function objects) is credited what the judge's clock around the call shows,
    less what the same protocol costs a baseline call beyond its events and less the
    `PROCESS_ALLOWANCE` of that protocol cost an honest process is never charged."""
    rounds = _rounds(0.210, 0.220, 0.510)  # the call really takes 0.300 ms
    note = credit_window(rounds, 0.05)
    assert note and "judge's own clock" in note
    least = 0.300 - PROCESS_ALLOWANCE * 0.21 - 0.01
    assert all(least < t < 0.305 for r in rounds for t in r["candidate"][1:3])


def test_a_clock_forged_by_far_is_also_refused() -> None:
    rounds = _rounds(0.010, 0.020, 1.200)  # the candidate's process clocks patched
    events = [x for r in rounds for x in r["candidate"]]
    timing = summarize(events, [x for r in rounds for x in r["candidate_host"]])
    found = cross_check(timing, [x for r in rounds for x in r["candidate_window"]],
                        [x for r in rounds for x in r["overhead"]])
    assert any("timing cross-check failed" in v for v in found), found


def test_clocks_disagreeing_are_refused_if_quiet_untrusted_if_contended() -> None:
    """On a contended machine the judge's own clock was held up too: the disagreement is
    no proof of a forged clock, so the verdict loses its speed reward instead (`noisy`)."""
    disagree = ["timing cross-check failed: by the judge's own clock even the fastest call "
                "took 3.709 ms, the candidate process reported 0.679 ms per call"]
    quiet, busy = Verdict(status=Status.OK), Verdict(status=Status.OK)
    settle(quiet, disagree, contended=False)
    settle(busy, disagree, contended=True)
    assert quiet.violations == disagree and not quiet.noisy
    assert not busy.violations and busy.noisy
    assert any("contended machine" in w and "3.709 ms" in w for w in busy.warnings)


def test_work_escaping_the_events_is_refused_even_on_a_contended_machine() -> None:
    """The candidate's own host clock is checked against the baselines' launch and
    synchronize cost under the same load: contention is no excuse there."""
    escaped = ["work escaped the timed region: 2.000 ms by the host clock with a device-wide "
               "synchronize vs 0.100 ms by events on the current stream"]
    busy = Verdict(status=Status.OK)
    settle(busy, escaped, contended=True)
    assert busy.violations == escaped and not busy.noisy
