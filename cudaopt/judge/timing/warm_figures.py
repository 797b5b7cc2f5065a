"""The warm phase's figures from its rounds of bursts: the candidate credited the judge's own
clock around its requests wherever that says more than its process's clocks, medians over
the rounds, speedups as medians (and lower quartiles) of per-round ratios, and the summed
kernel time of the profiled burst. Pure arithmetic over what `warm` measured."""

from __future__ import annotations

import statistics
from typing import Any

from cudaopt.judge.timing.crosscheck import allowance, half_spread
from cudaopt.judge.verdict.verdict import Verdict

PROTOCOL = ("back-to-back calls on fresh inputs, no cache flush, one device synchronize; "
            "per call: events around the whole burst, started with the first call queued "
            "(CUDA), the host clock (CPU)")
#: What one request's wall time may differ by between two processes doing the same work on a
#: loaded machine, beyond `allowance`: an honest copy of 256 MiB, three calls a burst, was
#: charged 21-42% (80-160 us a burst) without it on an H200 beside other test processes
#: (2026-12-04). A 40 ms burst (`calls_per_round`) forged by 30% stands 48x above it.
REQUEST_SLACK_MS = 0.25
MIN_MS = 1e-6  # a candidate whose clocks and the judge's all say nothing: no division by 0
Rounds = list[dict[str, dict[str, Any]]]


def note_clock(verdict: Verdict, margin: float) -> None:
    """Say so when the judge's clock moved the back-to-back figure by more than the margin."""
    warm = verdict.warm or {}
    added = (warm.get("judge_clock") or {}).get("added_ms", 0.0)
    total = warm.get("candidate_ms", 0.0)
    if total and added > margin * (total - added):
        verdict.warnings.append(
            f"back to back, by the judge's own clock the candidate's calls took {total:.4f} ms, "
            f"by its own {total - added:.4f} ms: the judge's figure is credited")


def mode_of(name: str) -> str | None:
    return name.split(":", 1)[1] if ":" in name else None


def credited(rounds: Rounds, names: list[str], calls: int) -> tuple[list[float], dict[str, float]]:
    """The candidate's per-call time in each round, and how the judge's clock moved it.

    Its own figure (events, or its host clock where that saw work the events did not) is
    its process's to forge, so the judge's clock is read around both of its requests and
    compared with the baselines' in the same round: what its timed calls' request
    (`go_wall_ms`, less the calls by its own figure, against eager's, the baseline that
    also copies and binds every call's outputs) and its drawing request (`prep_wall_ms`,
    less its warm-up call, where work on inputs known before the clock would hide) cost
    beyond the baselines' (median against median: one noisy round on either side falls out), less
    what two processes honestly differ by (`allowance`, or the half spread of the
    candidate's own requests where a loaded machine made that wider), is added, spread over
    the calls (`added_ms`). A forged clock, or work hidden in the draw, is in every round;
    widening its own spread on purpose moves its median too."""
    own = [_own(r, names) for r in rounds]
    go_over = [r["eager"]["go_wall_ms"] - r["eager"]["ms"] * calls for r in rounds]
    prep = [r[n]["prep_wall_ms"] - r[n]["ms"] for r in rounds for n in names]
    cand_go = [r["candidate"]["go_wall_ms"] - ms * calls for r, ms in zip(rounds, own,
                                                                       strict=True)]
    cand_prep = [r["candidate"]["prep_wall_ms"] - ms for r, ms in zip(rounds, own, strict=True)]
    parts = {"go_excess_ms": statistics.median(cand_go) - statistics.median(go_over),
             "go_allowance_ms": max(allowance(go_over), half_spread(cand_go))
             + REQUEST_SLACK_MS,
             "prep_excess_ms": statistics.median(cand_prep) - statistics.median(prep),
             "prep_allowance_ms": max(allowance(prep), half_spread(cand_prep))
             + REQUEST_SLACK_MS}
    parts["added_ms"] = (max(0.0, parts["go_excess_ms"] - parts["go_allowance_ms"])
                         + max(0.0, parts["prep_excess_ms"] - parts["prep_allowance_ms"])) / calls
    return [ms + parts["added_ms"] for ms in own], parts


def _own(rnd: dict[str, dict[str, Any]], names: list[str]) -> float:
    """The candidate's own figure: events, unless its host clock around the burst saw more
    than launching and synchronizing cost the baselines (work the events did not cover)."""
    gap = statistics.median(rnd[n]["host_ms"] - rnd[n]["ms"] for n in names)
    cand = rnd["candidate"]
    return max(cand["ms"], cand["host_ms"] - gap)


def summarize(rounds: Rounds, names: list[str], profiled: dict[str, dict[str, Any]] | None,
              calls: int) -> dict[str, Any]:
    """Medians over rounds; speedups are medians (and lower quartiles) of per-round ratios."""
    cand, clock = credited(rounds, names, calls)
    cand = [max(ms, MIN_MS) for ms in cand]
    modes = [n for n in names if n != "eager"]
    per_mode = {mode_of(n): statistics.median(r[n]["ms"] for r in rounds) for n in modes}
    warm: dict[str, Any] = {"protocol": PROTOCOL, "calls": calls, "rounds": len(rounds),
                            "candidate_ms": statistics.median(cand), "judge_clock": clock,
                            "eager_ms": statistics.median(r["eager"]["ms"] for r in rounds)}
    bases = {"eager": [r["eager"]["ms"] for r in rounds]}
    if modes:
        bases["compile"] = [min(r[n]["ms"] for n in modes) for r in rounds]
        warm["compile_ms"] = statistics.median(bases["compile"])
        warm["compile_mode"] = min(per_mode, key=per_mode.__getitem__)
        warm["compile_modes_ms"] = per_mode
    for base, times in bases.items():
        ratios = sorted(b / c for b, c in zip(times, cand, strict=True))
        warm[f"speedup_vs_{base}"] = statistics.median(ratios)
        warm[f"speedup_vs_{base}_low"] = statistics.quantiles(ratios, n=4)[0]
    if profiled is None:  # no profiled burst (`JudgeOptions.breakdown` off)
        return warm
    summed = {n: profiled[n]["breakdown"]["summed_ms"] for n in profiled}
    kernel = {"eager": summed["eager"], "candidate": summed["candidate"]}
    if modes:
        kernel["compile"] = min(summed[n] for n in modes)  # the fastest mode, here too
    if profiled["candidate"]["breakdown"]["unit"] == "kernel":
        warm["kernel_ms"] = kernel  # summed device time of kernels: CUDA Agent's figure
        for base in bases:
            if kernel.get(base) and kernel["candidate"] > 0:
                warm[f"kernel_speedup_vs_{base}"] = kernel[base] / kernel["candidate"]
    return warm
