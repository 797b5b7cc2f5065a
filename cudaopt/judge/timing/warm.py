"""The warm phase: back-to-back figures, where the time goes, and the distance to the limit.

Runs after the cold per-call timing, on calls of its own (the cold figures are final by
then). Rounds of bursts (see `burst`) alternate between eager, each torch.compile mode and
the candidate in random order, all on the same fresh seeds; a secret few of each round's
candidate outputs are checked against eager's. A last, profiled burst of each gives the
per-kernel (CUDA) or per-operator (CPU) breakdown, whose summed kernel time is CUDA Agent's
figure. Nothing here changes the cold figures; the reward asks both protocols to agree.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from typing import Any

from cudaopt.judge.building.caches import cache_root
from cudaopt.judge.checks.handover import allowed, ask_reference, compare_kept, timed_mismatch
from cudaopt.judge.timing import roofline
from cudaopt.judge.timing.burst import KEY
from cudaopt.judge.timing.timer import calls_per_round
from cudaopt.judge.timing.warm_figures import Rounds, mode_of, note_clock, summarize
from cudaopt.judge.verdict.reward import milestone_reward
from cudaopt.judge.verdict.verdict import Verdict, add_parts, phase
from cudaopt.judge.workers.session import Session
from cudaopt.judge.workers.tensors import dtype_named

ROUNDS = 5  # timed rounds, after one that warms up
CHECKS = 3  # outputs checked per round, chosen after the burst
BUDGET_BYTES = {"cuda": 4 << 30, "cpu": 1 << 30}  # input sets and output copies of a burst
def compile_modes(mode: str) -> list[str]:
    """`--compile-mode default,max-autotune-no-cudagraphs`: the fastest is the baseline."""
    return [m.strip() for m in mode.split(",") if m.strip()]


def measure(session: Session, verdict: Verdict, say: Callable[[str], None]) -> None:
    options = session.options
    modes = compile_modes(options.compile_mode) if options.compile_baseline else []
    names = ["eager", *[f"compile:{m}" for m in modes]]
    cold = [t.median_ms for t in (verdict.eager, verdict.compiled_baseline, verdict.candidate)
            if t is not None]
    say("warm: sizing back-to-back calls")
    with phase(verdict, "warm.sizing"):
        sizing = _burst(session, verdict, "eager", _seeds(session, calls_per_round(max(cold)) + 1),
                        budget_bytes=BUDGET_BYTES.get(session.device, 1 << 30),
                        out_bytes=_out_bytes(session))
    verdict.compile_mode = sizing.get("compile_mode", "") if modes else ""
    calls = sizing["calls"]
    if calls < 2:
        verdict.warm = {"skipped": "three sets of inputs and outputs do not fit in the memory "
                                   "budget of a burst: the per-call figure stands alone"}
        if not options.breakdown:
            _probe_kernels(session, verdict, say, reuse=True)
            return _release(session)
        say("profiling: where the time goes (one call, on the inputs of its warm-up)")
        profiled = _profiled(session, verdict, names, 1, reuse=True)
        times = {"eager": verdict.eager, "compile": verdict.compiled_baseline,
                 "candidate": verdict.candidate}
        return _explain(session, verdict, names, profiled, "cold per-call time", {
            f"{name}_ms": t.median_ms for name, t in times.items() if t is not None})
    rounds: Rounds = []
    beside = session.watch()
    for index in range(ROUNDS + 1):
        say(f"warm: round {index}/{ROUNDS} ({calls} back-to-back calls each)")
        with phase(verdict, "warm.rounds"):
            samples = _round(session, verdict, names, calls, profile=())
        if verdict.violations:
            return _release(session)
        rounds += [samples] if index else []
    _untrusted(verdict, beside.reasons())
    if not options.breakdown:
        verdict.warm = summarize(rounds, names, None, calls)
        note_clock(verdict, options.margin)
        _probe_kernels(session, verdict, say)
        return _release(session)
    say("profiling: where the time goes")
    with phase(verdict, "warm.profile"):
        profiled = _profiled(session, verdict, names, calls)
    verdict.warm = summarize(rounds, names, profiled, calls)
    note_clock(verdict, options.margin)
    _explain(session, verdict, names, profiled, "warm back-to-back time", verdict.warm)


def _untrusted(verdict: Verdict, found: list[str]) -> None:
    """The back-to-back figures were taken beside the candidate's own load (`beside`):
    the verdict earns no speed reward, whatever the per-call figure said."""
    if found:
        verdict.noisy = True
        verdict.warnings.append(f"back to back, {'; '.join(found)}: the timing is untrusted "
                                "(no speed reward above 1)")


def _probe_kernels(session: Session, verdict: Verdict, say: Callable[[str], None],
                   reuse: bool = False) -> None:
    """Without a breakdown (bench's candidate mode, the reward service) a speed milestone
    still needs a kernel of the candidate's own: one profiled call of the candidate, after
    every timed call (a process once profiled launches slower), names the kernels it
    launched. Only on CUDA, where the profiler names kernels, and only where the figures
    would earn a milestone: most candidates of a bench make no call more."""
    options = session.options
    if session.device != "cuda" or verdict.violations or milestone_reward(
            verdict, options.margin, options.isolation == "required") <= 1.0:
        return
    say("profiling: which of the candidate's kernels its calls launch")
    with phase(verdict, "warm.kernels"):
        _burst(session, verdict, "candidate", _seeds(session, 1 if reuse else 2),
               profile=True, reuse=reuse)


def _explain(session: Session, verdict: Verdict, names: list[str],
             profiled: dict[str, dict[str, Any]], label: str, times: dict[str, Any]) -> None:
    """The breakdown of the profiled calls and each contestant's distance to the limit."""
    if verdict.violations:
        return _release(session)
    winner = (verdict.warm or {}).get("compile_mode") or verdict.compile_mode
    shown = ["eager", *([f"compile:{winner}"] if f"compile:{winner}" in names else []),
             "candidate"]
    verdict.breakdown = {_label(n): {**profiled[n]["breakdown"], "mode": mode_of(n)}
                         for n in shown}
    _release(session)  # first: a task's inputs can be gigabytes
    options = session.options
    with phase(verdict, "warm.roofline"):
        traits = ask_reference(session, "traits", options.timeout_s, session.baseline,
                               seed=session.seed(), cache=str(cache_root(options) / "peaks.json"))
    # it drew and called once more: the figure a lender keeps the process by is taken after
    # (a kept process held 2x a task's inputs and outputs over it)
    session.note_memory("baseline", traits)
    verdict.roofline = roofline.distances(traits, times, verdict.breakdown, label)


def _profiled(session: Session, verdict: Verdict, names: list[str], calls: int,
              reuse: bool = False) -> dict[str, dict[str, Any]]:
    """A round with the breakdown of each contestant. On CUDA a process once profiled
    launches slower ever after (1.22-1.29x per launch on an H200, 2026-12-04:
    benchmarks/profiled_launch.py), so a baseline process is profiled once and never timed
    again (it trades roles with the reference process: `JudgePool._swap`), and later
    judgements of the task reuse its breakdown (it depends on the task, the mode and the
    device only). Eager still runs, unprofiled: the candidate's outputs are checked against
    its."""
    known = session.pool.breakdowns if session.device == "cuda" else {}  # CPU: none kept
    fresh = [name for name in names if name not in known]
    run = [name for name in names if name == "eager" or name in fresh]
    replies = _round(session, verdict, run, calls, profile={*fresh, "candidate"}, reuse=reuse)
    if fresh:
        session.baseline_profiled()
    for name in names:
        if name in known:
            replies[name] = {**replies.get(name, {}), "breakdown": known[name]}
        elif "breakdown" in replies[name]:
            known[name] = replies[name]["breakdown"]
    return replies


def _round(session: Session, verdict: Verdict, names: list[str], calls: int,
           profile: Collection[str], reuse: bool = False) -> dict[str, dict[str, Any]]:
    """One burst of each of `names` and the candidate, in a secret order; those named in
    `profile` profiled."""
    seeds = _seeds(session, 1 if reuse else calls + 1)
    order = [*names, "candidate"]
    session.rand_shuffle(order)
    replies = {}
    for name in order:
        with session.candidate_held(name):
            replies[name] = _burst(session, verdict, name, seeds, profile=name in profile,
                                   reuse=reuse, keep=name in ("eager", "candidate"))
    chosen = list(range(calls))
    session.rand_shuffle(chosen)
    keys = [f"{KEY}{i}" for i in sorted(chosen[:CHECKS])]
    with phase(verdict, "warm.compare"):
        mismatches = compare_kept(session, session.baseline, keys, session.outputs_dir("warm"))
    for key in keys:
        if mismatches[key]:
            verdict.violations.append(timed_mismatch(
                session, "output of a back-to-back call is wrong (outputs must stay valid "
                "after the next call, and no result may be reused across calls)",
                mismatches[key][0]))
            break
    return replies


def _burst(session: Session, verdict: Verdict, name: str, seeds: list[int], *,
           profile: bool = False, reuse: bool = False, keep: bool = False,
           **sizing: Any) -> dict[str, Any]:
    """One contestant's burst, in two requests the judge's clock brackets apart: `burst`
    draws the input sets and makes the warm-up call (`prep_wall_ms`), `burst_go` makes the
    timed calls and commits to their outputs' digests (`go_wall_ms`). Those two figures are
    set here, over whatever the worker replied (see `credited`)."""
    timeout = session.options.timeout_s
    candidate = name == "candidate"

    def ask(op: str, **args: Any) -> dict[str, Any]:
        if not candidate:
            return ask_reference(session, op, timeout, session.baseline, which=name, **args)
        reply = session.candidate.call(op, timeout, **args)
        found = allowed(session, reply.get("violations", []))
        verdict.violations.extend(v for v in found if v not in verdict.violations)
        return reply

    start = time.perf_counter()
    ready = ask("burst", seeds=seeds, reuse=reuse, keep=keep, **sizing)
    if not candidate and not ready.get("calls"):  # the sizing burst found no room
        return ready
    went = time.perf_counter()
    reply = ask("burst_go", profile=profile, keep=keep)
    done = time.perf_counter()
    if profile:  # where a profiled round's time goes, contestant by contestant
        add_parts(verdict, "warm.profiled", {_label(name): done - start})
    if candidate:  # hostile input: the candidate wrote this reply
        digests = reply.get("digests")
        for key, value in (digests.items() if isinstance(digests, dict) else ()):
            session.commit(str(key), {"digest": value})
        if profile and session.device == "cuda":  # the profiler names kernels on CUDA only
            session.note_kernels(reply)
        # its tamper check, off the clock: the baselines make none
        session.note_memory("candidate", ask("burst_end"))
    return {**reply, "prep_wall_ms": (went - start) * 1e3, "go_wall_ms": (done - went) * 1e3}


def _release(session: Session) -> None:
    """The baseline process may stay warm: it keeps no input sets or copies of ours."""
    session.note_memory("baseline", ask_reference(session, "trim", session.options.timeout_s,
                                                  session.baseline))


def _seeds(session: Session, count: int) -> list[int]:
    return [session.seed() for _ in range(count)]


def _out_bytes(session: Session) -> int:
    return sum(leaf["numel"] * dtype_named(leaf["dtype"]).itemsize
               for leaf in session.output_leaves)


def _label(name: str) -> str:
    return name.split(":", 1)[0]
