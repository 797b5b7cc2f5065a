"""The timing phase: eager, torch.compile and the candidate in interleaved rounds.

Baselines are timed in a reference process, which never imported the candidate; the
candidate in its own. Rounds alternate between them in random order so clock drift and
thermal state hit all three alike, and speedups are medians of per-round ratios.

Each round is `rounds.timed_round` under a secret `rounds.Plan`; this module decides how
many calls a round has, how many rounds, how many are checked, and turns them into the
verdict's figures.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from cudaopt.judge.checks.handover import ask_reference, reference_reply
from cudaopt.judge.timing import contention, noise
from cudaopt.judge.timing.crosscheck import (
    credit,
    credit_window,
    credited_clock,
    cross_check,
    settle,
)
from cudaopt.judge.timing.noise import Samples
from cudaopt.judge.timing.rounds import Plan, output_bytes, timed_round
from cudaopt.judge.timing.timer import calls_per_round, summarize
from cudaopt.judge.timing.warm import measure
from cudaopt.judge.verdict.verdict import Verdict, add_parts, compile_story, phase
from cudaopt.judge.workers.child import Worker
from cudaopt.judge.workers.scheduling import departure
from cudaopt.judge.workers.session import Session

GUARD_SHARE = 0.1  # calls run under the operator guard (not timed)
CHECKS, STRICT_CHECKS = 3, 8  # checked calls per round (see `rounds` for their copies)
#: A contestant's single calls per round at most. Below a millisecond a call's two requests
#: cost far more than the call (an H100, a 0.08 ms call: 0.55 ms to prepare, 0.8 ms to make,
#: copy and digest it, 0.13 ms a request through the pipes, 2026-12-06), so each call a round
#: holds is paid about 20 times over; at 50 calls a small task's five rounds took 1.1 s of a
#: reward-service judgement's 2.1 s of device time. At 20 calls (a round's median of about
#: 18 timed ones) the reward service's suite had 2 noisy verdicts of 16 and the same rewards
#: as at 50 on another H100 that day; on a noisier one, 6 of 16 at 20 and 7 at 50. The warm
#: phase's bursts keep theirs: a burst's length is what makes a forged clock stand out there
#: (`warm_figures`).
ROUND_CALLS = 20
CHECKED_BYTES = 8 << 30  # outputs checked per round at most (strict: twice), but always one
                         # call: a check of a multi-GB output draws, calls and compares anew


def await_baselines(session: Session, verdict: Verdict, say: Callable[[str], None]) -> None:
    """The baseline worker's load and compile, sent when the session began: awaited without
    the device, so another judgement times while this one's baseline boots and compiles."""
    say(f"waiting for the baselines (torch.compile mode={session.options.compile_mode})")
    if not session.baseline_pending:
        say("baselines: kept warm from an earlier judgement of this task (nothing traced or "
            "compiled)")
    with phase(verdict, "baselines"):
        while session.baseline_pending:  # load and compile, sent when the session began
            reply = reference_reply(session.baseline, session.baseline_pending[0])
            session.baseline_pending.pop(0)
            add_parts(verdict, "baselines",
                      session.boot_waited(session.baseline, reply.get("parts_s", {})))
            if "cache" in reply:
                verdict.baseline_cache = reply["cache"]
                say(f"baselines: torch.compile {compile_story(reply['cache'])}")


def profile(session: Session, verdict: Verdict, say: Callable[[str], None]) -> None:
    """Time eager, torch.compile and the candidate (the baselines awaited first)."""
    options = session.options
    names = ["eager", "compile"] if options.compile_baseline else ["eager"]
    say("baselines ready; timing: warm-up")
    pins = _pin(session, verdict)
    try:
        with session.pool.quiet(session.device, verdict.timing_cpu):
            with phase(verdict, "timing"):
                _time(session, verdict, say, names)
            if not verdict.violations:
                with phase(verdict, "warm"):
                    measure(session, verdict, say)  # the warm, back-to-back figure, alike
    finally:
        for worker, before in pins:
            if worker.alive:  # a candidate that crashed is reported as such, not here
                worker.call("pin", options.timeout_s, restore=before)
    moved = departure(session.baseline.proc.pid)
    if moved:  # by another process: only an unisolated candidate can reach it
        verdict.noisy = True
        verdict.warnings.append(
            f"the baseline process was rescheduled while it was timed ({moved}): the timing "
            "is untrusted (no speed reward above 1)")


def _pin(session: Session, verdict: Verdict) -> list[tuple[Worker, list[int]]]:
    """CUDA: the baseline's and the candidate's timing threads on one CPU (see `pinning`);
    the workers and the CPUs to give back afterwards."""
    if session.device != "cuda":
        return []
    timeout_s = session.options.timeout_s
    base = ask_reference(session, "pin", timeout_s, session.baseline)
    if base["cpu"] is None:
        return []
    cand = session.candidate.call("pin", timeout_s, cpu=base["cpu"])
    pins = [(session.baseline, base["before"]), (session.candidate, cand["before"])]
    if cand["cpu"] is None:
        session.baseline.call("pin", timeout_s, restore=base["before"])
        return []
    verdict.timing_cpu = base["cpu"]
    return pins


def _time(session: Session, verdict: Verdict, say: Callable[[str], None],
          names: list[str]) -> None:
    options = session.options
    started = time.perf_counter()
    warm = timed_round(session, names, Plan.draw(session, 3, 1, 0.0), verdict)
    if verdict.violations:
        return
    slowest_ms = max(statistics.median(warm[n]) for n in [*names, "candidate"])
    wall_ms = (time.perf_counter() - started) * 1e3 / (3 * (len(names) + 1))
    calls = calls_per_round(slowest_ms, wall_ms, most=ROUND_CALLS)
    _timed(session, names, calls, verdict, say, _checks(session, CHECKS, 1), GUARD_SHARE)
    top = max(verdict.speedup_vs_eager or 0, verdict.speedup_vs_compile or 0)
    if top > options.ceiling and not verdict.violations:
        say(f"speedup {top:.1f}x is above the {options.ceiling:g}x ceiling: re-measuring")
        verdict.remeasured = True
        _timed(session, names, calls, verdict, say, _checks(session, STRICT_CHECKS, 2),
               3 * GUARD_SHARE)
        verdict.warnings.append(
            f"implausible speedup {top:.1f}x (ceiling {options.ceiling:g}x): re-measured with "
            f"more timed outputs checked and more calls guarded; now "
            f"{verdict.speedup_vs_eager:.2f}x vs eager")


def _timed(session: Session, names: list[str], calls: int, verdict: Verdict,
           say: Callable[[str], None], checks: int, guard_share: float) -> None:
    """Measure and summarize. When the clocks the candidate cannot touch disagree with its
    own, measure once more: a disagreement that persists is refused, unless the machine was
    contended (see `crosscheck.settle`)."""
    rounds, contended = _reliably(session, names, calls, verdict, say, checks, guard_share)
    disagree = _summarize(verdict, names, rounds, session.options.margin)
    if disagree and not verdict.violations:
        say("the clocks disagree: re-measuring")
        rounds, contended = _reliably(session, names, calls, verdict, say, checks, guard_share)
        disagree = _summarize(verdict, names, rounds, session.options.margin)
    settle(verdict, disagree, contended)


def _reliably(session: Session, names: list[str], calls: int, verdict: Verdict,
              say: Callable[[str], None], checks: int,
              guard_share: float) -> tuple[list[Samples], bool]:
    """Measure; when the measurements are unreliable (see `noise`), measure once more and
    keep the steadier of the two. Noise in both marks the verdict `noisy`. Not measured
    again where the rounds already show no speed milestone within reach and the machine was
    not contended: scatter is in the rounds' statistics, a contended machine's bias is not,
    and it could lean either way. The candidate's own load beside the baselines' calls
    (`beside`) is unreliable too, but it is no contention: it excuses no disagreement of the
    clocks. Also returns whether the kept measurement ran on a contended machine."""
    margin = session.options.margin
    probe, beside = _probe(session), session.watch()
    rounds = _measure(session, names, calls, verdict, say, checks, guard_share)
    contended = probe.reasons()
    found = noise.reasons(rounds, names, margin) + contended + beside.reasons()
    beyond = not contended and noise.out_of_reach(rounds, margin)
    if found and not verdict.violations and not beyond:
        say(f"unreliable measurements ({found[0]}): re-measuring")
        probe, beside = _probe(session), session.watch()
        again = _measure(session, names, calls, verdict, say, checks, guard_share)
        contended_again = probe.reasons()
        found_again = (noise.reasons(again, names, margin) + contended_again
                       + beside.reasons())
        if not found_again or noise.score(again, names) < noise.score(rounds, names):
            rounds, found, contended = again, found_again, contended_again
    verdict.noisy = bool(found)
    if found:
        how = (f"not re-measured, the speedup over eager being below {1 + margin:g}x with "
               f"{noise.CONFIDENCE:.0%} confidence" if beyond else "even when re-measured")
        verdict.warnings.append(f"noisy measurements, {how}: {'; '.join(found)} "
                                "(no speed reward above 1; judge on a quieter machine)")
    return rounds, bool(contended)


def _probe(session: Session) -> contention.Probe:
    """Watches the scheduler while the baseline and candidate workers are timed."""
    return contention.Probe([session.baseline.proc.pid, session.candidate.proc.pid])


def _checks(session: Session, most: int, budgets: int) -> int:
    """Checked calls per round: `most`, fewer where their outputs are large."""
    return max(1, min(most, budgets * CHECKED_BYTES // max(output_bytes(session), 1)))


def _measure(session: Session, names: list[str], calls: int, verdict: Verdict,
             say: Callable[[str], None], checks: int, guard_share: float) -> list[Samples]:
    options = session.options
    rounds: list[Samples] = []
    deadline = time.monotonic() + options.time_budget_s
    while len(rounds) < options.max_rounds:
        say(f"timing: round {len(rounds) + 1}{session.memory_note()}")
        plan = Plan.draw(session, calls, checks, guard_share)
        rounds.append(timed_round(session, names, plan, verdict))
        verdict.timing_rounds += 1
        if verdict.violations:
            break
        if len(rounds) >= options.min_rounds and (
                noise.ratio_spread(rounds, names) <= options.target_spread
                or noise.settled(rounds, names, options.margin) or time.monotonic() > deadline):
            break
    return rounds


def _summarize(verdict: Verdict, names: list[str], rounds: list[Samples],
               margin: float) -> list[str]:
    """The verdict's figures from `rounds`; returns where the clocks disagree."""
    events = [x for r in rounds for x in r["candidate"]]
    rounds = [dict(r) for r in rounds]
    slower = credited_clock(rounds, margin)
    notes = []
    if slower:
        credit(rounds, slower[0])
        notes.append(f"the call's work is not all seen by events on the current stream: "
                     f"{slower[1]}; the slower clock is credited (a time never excludes work "
                     "the call caused)")
    judged = credit_window(rounds, margin)
    notes += [judged] if judged else []
    for note in notes:
        verdict.warnings = [w for w in verdict.warnings if not w.startswith(note[:40])] + [note]
    pooled = {n: [x for r in rounds for x in r[n]]
              for n in [*names, "candidate", "candidate_host", "candidate_window", "overhead",
                        "gap"]}
    verdict.eager = summarize(pooled["eager"])
    verdict.candidate = summarize(pooled["candidate"], pooled["candidate_host"])
    if "compile" in names:
        verdict.compiled_baseline = summarize(pooled["compile"])
    for name in names:
        ratios = sorted(noise.round_ratios(rounds, name))
        low = statistics.quantiles(ratios, n=4)[0] if len(ratios) > 1 else ratios[0]
        setattr(verdict, f"speedup_vs_{name}", statistics.median(ratios))
        setattr(verdict, f"speedup_vs_{name}_low", low)
    return cross_check(summarize(events, pooled["candidate_host"]),
                       pooled["candidate_window"], pooled["overhead"], pooled["gap"])
