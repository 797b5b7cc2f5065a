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

from cudaopt.judge.verdict import Timing

# Honest calls stay well inside these; a forged clock can gain at most this much.
SIDE_STREAM_FACTOR, SIDE_STREAM_SLACK_MS = 2.0, 0.1
WALL_FACTOR, WALL_SLACK_MS = 1.5, 0.15


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
            f"timing cross-check failed: by the judge's own clock even the fastest call took "
            f"{implied:.3f} ms, the candidate process reported {cand.median_ms:.3f} ms per call "
            "(work done outside its timed region, or a tampered clock)")
    return found


def credited_clock(rounds: list[dict[str, list[float]]], margin: float) -> tuple[str, str] | None:
    """Which clock the candidate's time must come from, when events undercount it.

    Events on the current stream see only what is ordered with it. The host clock around
    the call and a device-wide synchronize (less what launching and synchronizing cost the
    baselines), or the parent's clock (less the protocol's overhead on the baselines), also
    see work left behind. When either says the call is slower than the events do, by more
    than the margin plus the spread of what it subtracts, the slower clock is credited:
    ("candidate_host" | "candidate_wall", why). None when the events stand."""
    events = statistics.median(x for r in rounds for x in r["candidate"])
    worst: tuple[float, str, str] | None = None
    for clock, less, label in (("candidate_host", "gap", "the host clock with a device-wide "
                                "synchronize"),
                               ("candidate_wall", "overhead", "the judge's own clock")):
        subtract = sorted(x for r in rounds for x in r[less])
        if len(subtract) < 2:
            continue
        q1, mid, q3 = statistics.quantiles(subtract, n=4)
        implied = statistics.median(x for r in rounds for x in r[clock]) - mid
        if implied > events * (1 + margin) + (q3 - q1) and (worst is None or implied > worst[0]):
            worst = (implied, clock, f"{label} says {implied:.4f} ms per call, events on the "
                     f"current stream {events:.4f} ms")
    return None if worst is None else (worst[1], worst[2])


def credit(rounds: list[dict[str, list[float]]], clock: str) -> None:
    """Replace each round's candidate times by `clock`'s, less the baselines' median cost
    of what that clock adds around a call."""
    less = "gap" if clock == "candidate_host" else "overhead"
    cost = statistics.median(x for r in rounds for x in r[less])
    for r in rounds:
        r["candidate"] = [max(t - cost, e) for t, e in zip(r[clock], r["candidate"],
                                                            strict=True)]
