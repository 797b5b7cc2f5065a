"""The candidate's self-reported times against clocks it cannot touch.

The candidate process times its own calls (device events, a host clock), and everything in
that process is within the candidate's reach. Two clocks are not:

- the host clock of the candidate process spans each call plus a device-wide synchronize,
  so work left running on a side stream shows up there even when it escapes the events;
- the parent process's clock brackets each call from the outside, from the message that
  starts it to the reply sent after its outputs were copied. The overhead around the call
  is measured on the baseline calls, which go through the same protocol in a process that
  never imported the candidate; what remains is the call itself, however the candidate's
  own clocks were patched, plus whatever ran outside them before the reply (a hook, a lazily
  computed output).

The parent's clock is read at its fastest call: scheduling noise only ever adds time, and
work done inside the window is there on every call, the fastest included. (Work done after
the reply cannot reach the output: outputs are copied before the reply goes out.) The
tolerance grows with the noise seen on the baseline calls, so a busy machine raises no false
alarm; on a quiet one the check is tight.
"""

from __future__ import annotations

import statistics

from cudaopt.judge.verdict.verdict import Timing, Verdict

# Honest calls stay well inside these; a forged clock can gain at most this much.
SIDE_STREAM_FACTOR, SIDE_STREAM_SLACK_MS = 2.0, 0.1
WALL_FACTOR, WALL_SLACK_MS = 1.5, 0.15
WALL_RULE = "timing cross-check failed"  # the parent's clock disagrees


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
    events stand.

    The judge's own clock is not credited: around each call it also holds the candidate
    process's own bookkeeping (integrity checks, output copies), which the baselines' overhead
    does not measure, so it would charge honest microsecond kernels for the judge's work. It
    stays a cross-check with a tolerance (`cross_check`), against forged clocks."""
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
