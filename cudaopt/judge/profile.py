"""The timing phase: eager, torch.compile and the candidate in interleaved rounds.

Baselines are timed in the reference process, which never imported the candidate; the
candidate in its own. Rounds alternate between them in random order so clock drift and
thermal state hit all three alike, and speedups are medians of per-round ratios.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

from cudaopt.judge.session import Session
from cudaopt.judge.timing import calls_per_round, summarize
from cudaopt.judge.verdict import Timing, Verdict
from cudaopt.judge.verify import ask_reference

Samples = dict[str, list[float]]


def profile(session: Session, verdict: Verdict, say: Callable[[str], None]) -> None:
    options = session.options
    names = ["eager", "compile"] if options.compile_baseline else ["eager"]
    if options.compile_baseline:
        say(f"compiling the torch.compile baseline (mode={options.compile_mode})")
        ask_reference(session, "compile", options.build_timeout_s, mode=options.compile_mode,
                      seeds=[session.seed(), session.seed()])
    say("timing: warm-up")
    warm = _round(session, names, calls=3, check_share=0.0, guard_share=0.0)
    slowest_ms = max(statistics.median(warm[n]) for n in [*names, "candidate"])
    calls = calls_per_round(slowest_ms)
    rounds = _measure(session, names, calls, verdict, say, check_share=0.2)
    _summarize(verdict, names, rounds)
    top = max(verdict.speedup_vs_eager or 0, verdict.speedup_vs_compile or 0)
    if top > options.ceiling and not verdict.violations:
        say(f"speedup {top:.1f}x is above the {options.ceiling:g}x ceiling: re-measuring")
        verdict.remeasured = True
        rounds = _measure(session, names, calls, verdict, say, check_share=0.5)
        _summarize(verdict, names, rounds)
        verdict.warnings.append(
            f"implausible speedup {top:.1f}x (ceiling {options.ceiling:g}x): re-measured with "
            f"half of all timed outputs checked; now {verdict.speedup_vs_eager:.2f}x vs eager")


def _measure(session: Session, names: list[str], calls: int, verdict: Verdict,
             say: Callable[[str], None], check_share: float) -> list[Samples]:
    options = session.options
    rounds: list[Samples] = []
    deadline = time.monotonic() + options.time_budget_s
    while len(rounds) < options.max_rounds:
        say(f"timing: round {len(rounds) + 1}")
        rounds.append(_round(session, names, calls, check_share, 0.1, verdict))
        if verdict.violations:
            break
        enough = len(rounds) >= options.min_rounds
        if enough and (_ratio_spread(rounds, names) <= options.target_spread
                       or time.monotonic() > deadline):
            break
    return rounds


def _round(session: Session, names: list[str], calls: int, check_share: float,
           guard_share: float, verdict: Verdict | None = None) -> Samples:
    """One round: `calls` timed calls of each, in random order, each on fresh inputs."""
    timeout = session.options.timeout_s
    order = [*names, "candidate"]
    session.rand_shuffle(order)
    samples: Samples = {}
    overhead_ms = 0.0
    for name in order:
        if name != "candidate":
            start = time.perf_counter()
            reply = ask_reference(session, "time", timeout, which=name,
                                  seeds=[session.seed() for _ in range(calls)])
            wall_ms = (time.perf_counter() - start) * 1e3
            overhead_ms = max(overhead_ms, (wall_ms - sum(reply["host_ms"])) / calls)
            samples[name] = reply["ms"]
            continue
        plan = [{"seed": session.seed(), "guard": session.rand() < guard_share,
                 "check": session.rand() < check_share} for _ in range(calls)]
        if check_share and not any(c["check"] for c in plan):
            plan[int(session.rand() * calls)]["check"] = True
        start = time.perf_counter()
        reply = session.candidate.call("time", timeout, calls=plan)
        wall_ms = (time.perf_counter() - start) * 1e3
        samples["candidate"] = reply["ms"] or [float("nan")]
        samples["candidate_host"] = reply["host_ms"]
        samples["candidate_wall"] = [wall_ms / calls]
        if verdict is not None:
            _verify_timed(session, verdict, reply)
    samples["overhead"] = [overhead_ms]
    return samples


def _verify_timed(session: Session, verdict: Verdict, reply: dict[str, Any]) -> None:
    """Outputs of timed calls are compared too: caching or skipping work when timed fails."""
    verdict.violations.extend(v for v in reply["violations"] if v not in verdict.violations)
    if not reply["kept"]:
        return
    out_dir = session.outputs_dir("timed")
    dump = session.candidate.call("dump", session.options.timeout_s, out_dir=str(out_dir))
    for item in dump["checked"]:
        ask_reference(session, "reference", session.options.timeout_s, seed=item["seed"], key="t")
        mismatch = ask_reference(session, "compare", session.options.timeout_s, key="t",
                                 manifest=item["manifest"], atol=session.options.atol,
                                 rtol=session.options.rtol)["mismatch"]
        if mismatch:
            verdict.violations.append("output of a timed call is wrong (the candidate behaves "
                                      "differently when timed): " + mismatch[0])
            break
    verdict.violations.extend(v for v in dump["violations"] if v not in verdict.violations)
    session.clear(out_dir)


def _ratios(rounds: list[Samples], base: str) -> list[float]:
    return [statistics.median(r[base]) / statistics.median(r["candidate"]) for r in rounds]


def _ratio_spread(rounds: list[Samples], names: list[str]) -> float:
    """Half the interquartile range of per-round ratios, relative to their median."""
    worst = 0.0
    for name in names:
        ratios = sorted(_ratios(rounds, name))
        q1, _, q3 = statistics.quantiles(ratios, n=4)
        worst = max(worst, (q3 - q1) / 2 / statistics.median(ratios))
    return worst


def _summarize(verdict: Verdict, names: list[str], rounds: list[Samples]) -> None:
    pooled = {n: [x for r in rounds for x in r[n]] for n in [*names, "candidate"]}
    host = [x for r in rounds for x in r["candidate_host"]]
    verdict.eager = Timing(**summarize(pooled["eager"]))
    verdict.candidate = Timing(**summarize(pooled["candidate"], host))
    if "compile" in names:
        verdict.compiled_baseline = Timing(**summarize(pooled["compile"]))
    for name in names:
        ratios = sorted(_ratios(rounds, name))
        low = statistics.quantiles(ratios, n=4)[0] if len(ratios) > 1 else ratios[0]
        setattr(verdict, f"speedup_vs_{name}", statistics.median(ratios))
        setattr(verdict, f"speedup_vs_{name}_low", low)
    _cross_check(verdict, rounds)


def _cross_check(verdict: Verdict, rounds: list[Samples]) -> None:
    """The candidate's self-reported times against clocks it cannot touch.

    The host clock spans each call plus a device-wide synchronize: work hidden on a side
    stream shows up there. The parent's wall clock spans a whole round: a forged or patched
    timer shows up there.
    """
    cand = verdict.candidate
    if cand.host_median_ms and cand.host_median_ms > 2 * cand.median_ms + 0.1:
        verdict.violations.append(
            f"work escaped the timed region: {cand.host_median_ms:.3f} ms by the host clock "
            f"with a device-wide synchronize vs {cand.median_ms:.3f} ms by events on the "
            "current stream (launch on the current stream, or make it wait for yours)")
    implied = statistics.median(r["candidate_wall"][0] - r["overhead"][0] for r in rounds)
    if implied > 3 * (cand.host_median_ms or cand.median_ms) + 0.25:
        verdict.violations.append(
            f"timing cross-check failed: the judge's own wall clock implies {implied:.3f} ms "
            f"per call, the candidate's timer reported {cand.median_ms:.3f} ms")
