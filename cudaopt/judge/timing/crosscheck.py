"""The candidate's self-reported times against clocks it cannot touch.

The candidate process times its own calls (device events, a host clock), and everything in
that process is within the candidate's reach: its clocks can be rewritten below Python, its
replies forged. Its time is therefore credited from a clock it cannot touch:

- the parent process's clock brackets each call from the outside, from the `prep` message
  that hands the worker its seed to the `go` reply that commits to the outputs (see
  `bench`, `digest`). The same protocol around a baseline call, in a process that never
  imported the candidate, costs what that clock shows beyond the baseline's own device
  time; what remains of the candidate's window is the call itself, however its clocks were
  patched, plus whatever it did with its inputs before the call (a hook on their draw) or
  with its outputs before committing to them. Whatever the candidate's protocol costs
  beyond the baselines', over the median round, is added to its time (`credit_window`):
  a forged clock buys nothing, and a moment of load on one side falls out of the median.
- the host clock of the candidate process spans each call plus a device-wide synchronize,
  so work left running on a side stream shows up there, with less noise than the parent's
  clock (`credited_clock`); it can only ever add to the candidate's time.

A clock forged by far is also refused (`cross_check`): the tolerance grows with the noise
seen on the baseline calls, so a busy machine raises no false alarm.
"""

from __future__ import annotations

import statistics

from cudaopt.judge.verdict.verdict import Timing, Verdict

# Honest calls stay well inside these; a forged clock can gain at most this much.
SIDE_STREAM_FACTOR, SIDE_STREAM_SLACK_MS = 2.0, 0.1
WALL_FACTOR, WALL_SLACK_MS = 1.5, 0.15
WALL_RULE = "timing cross-check failed"  # the parent's clock disagrees
#: Of the baselines' protocol time, what the candidate's may cost beyond it uncharged: two
#: processes run the same protocol up to 7% apart for the whole of a judgement (where
#: each sits relative to the judge's process), measured on 2 loaded CPU cores, 2026-12-03.
PROCESS_ALLOWANCE = 0.1


def cross_check(cand: Timing, wall_ms: list[float], overhead_ms: list[float],
                gap_ms: list[float] | None = None) -> list[str]:
    """Violations when the candidate's reported times disagree with the other clocks.

    `gap_ms`: host time minus event time of the baseline calls, what launching and
    synchronizing honestly cost on this machine now (a busy CPU or a GPU shared with other
    processes makes it large); the candidate is allowed the same."""
    found = []
    honest_gap_ms = statistics.median(gap_ms) if gap_ms else 0.0
    if cand.host_median_ms and cand.host_median_ms > (
            SIDE_STREAM_FACTOR * cand.median_ms + SIDE_STREAM_SLACK_MS + honest_gap_ms):
        found.append(
            f"work escaped the timed region: {cand.host_median_ms:.3f} ms by the host clock "
            f"with a device-wide synchronize vs {cand.median_ms:.3f} ms by events on the "
            "current stream (launch on the current stream, or make it wait for yours)")
    if not wall_ms or not overhead_ms:
        return found
    implied = min(wall_ms) - min(overhead_ms)
    noise = max(overhead_ms) - min(overhead_ms)
    if implied > WALL_FACTOR * cand.median_ms + WALL_SLACK_MS + noise:
        found.append(
            f"{WALL_RULE}: by the judge's own clock even the fastest call took "
            f"{implied:.3f} ms, the candidate process reported {cand.median_ms:.3f} ms per call "
            "(work done outside its timed region, or a tampered clock)")
    return found


def settle(verdict: Verdict, disagree: list[str], contended: bool) -> None:
    """A disagreement that survived a second measurement is refused, except the parent's
    clock's on a machine the contention probe saw contended: there that clock itself was
    held up, so its disagreement proves nothing either way. The timing is then untrusted,
    not refused: the verdict is `noisy` (no speed reward above 1), and the warning says why.
    A candidate cannot buy that way out: its own processes' load is not contention
    (`contention`). The candidate process's own host clock is not excused: the baselines'
    launch and synchronize cost, measured under the same load, already widens its check."""
    excused = [v for v in disagree if contended and v.startswith(WALL_RULE)]
    if excused:
        verdict.noisy = True
        verdict.warnings.append("the clocks disagreed on a contended machine, so the timing "
                                "is untrusted rather than refused: " + "; ".join(excused))
    verdict.violations.extend(v for v in disagree
                              if v not in excused and v not in verdict.violations)


def credited_clock(rounds: list[dict[str, list[float]]], margin: float) -> tuple[str, str] | None:
    """Which clock the candidate's time must come from, when events undercount it.

    Events on the current stream see only what is ordered with it. The host clock around
    the call and a device-wide synchronize, less what launching and synchronizing cost the
    baselines (both processes take that clock the same way), also sees work left behind.
    When it says the call is slower than the events do, by more than the margin plus the
    spread of what it subtracts, it is credited: ("candidate_host", why). None when the
    events stand. (The judge's own clock is credited after this, see `credit_window`.)"""
    events = statistics.median(x for r in rounds for x in r["candidate"])
    subtract = sorted(x for r in rounds for x in r["gap"])
    if len(subtract) < 2:
        return None
    q1, mid, q3 = statistics.quantiles(subtract, n=4)
    implied = statistics.median(x for r in rounds for x in r["candidate_host"]) - mid
    if implied > events * (1 + margin) + (q3 - q1):
        return "candidate_host", (f"the host clock with a device-wide synchronize says "
                                  f"{implied:.4f} ms per call, events on the current stream "
                                  f"{events:.4f} ms")
    return None


def credit(rounds: list[dict[str, list[float]]], clock: str) -> None:
    """Replace each round's candidate times by `clock`'s, less the baselines' median cost
    of launching and synchronizing around a call."""
    cost = statistics.median(x for r in rounds for x in r["gap"])
    for r in rounds:
        r["candidate"] = [max(t - cost, e) for t, e in zip(r[clock], r["candidate"],
                                                            strict=True)]


def credit_window(rounds: list[dict[str, list[float]]], margin: float) -> str | None:
    """Add to every candidate call what its protocol cost beyond the baselines', when it
    cost more: per round, the median of the judge's clock less the candidate's own time
    over its calls, less the median of the same on the baseline calls (`protocol`); over
    the rounds, the median of that. Rounds whose calls a moment of load hit harder on one
    side than the other fall out of the median; a forged clock, or work hidden before the
    call, is there in every round. Returns a note when that moved the candidate's median
    by more than the margin, else None. Less the half spread of the baselines' own
    protocol cost: two processes never run the protocol in quite the same time, and an
    honest call is not charged for that; hidden work or a forged clock smaller than it
    goes uncharged, as does a `PROCESS_ALLOWANCE` of the protocol's time (tens of
    microseconds on CPU, a few on a GPU)."""
    protocol = [x for r in rounds for x in r["protocol"]]
    excess = statistics.median(
        statistics.median(w - t for w, t in zip(r["candidate_window"], r["candidate"],
                                                strict=True))
        - statistics.median(r["protocol"]) for r in rounds) - allowance(protocol)
    if excess <= 0:
        return None
    before = statistics.median(x for r in rounds for x in r["candidate"])
    for r in rounds:
        r["candidate"] = [t + excess for t in r["candidate"]]
    after = before + excess
    if after <= before * (1 + margin):
        return None
    return (f"by the judge's own clock the candidate's calls took {after:.4f} ms, by its own "
            f"{before:.4f} ms: the judge's clock is credited")


def allowance(protocol: list[float]) -> float:
    """What a candidate's protocol may cost beyond the baselines' uncharged: the half spread
    of theirs, or a `PROCESS_ALLOWANCE` of its median, whichever is larger."""
    if not protocol:
        return 0.0
    return max(half_spread(protocol), PROCESS_ALLOWANCE * statistics.median(protocol))


def half_spread(values: list[float]) -> float:
    """Half the interquartile range: how far a sample strays from the median, by and large."""
    if len(values) < 2:
        return 0.0
    q1, _, q3 = statistics.quantiles(sorted(values), n=4)
    return (q3 - q1) / 2
