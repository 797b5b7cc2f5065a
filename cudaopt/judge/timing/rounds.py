"""One timed round: every contestant's calls under one secret plan, outputs then checked.

Every call takes the per-call protocol of `bench`, driven from here with a secret plan: the
seeds, which calls refill the previous call's tensors, which run under the operator guard
and which have their outputs checked. The check decision is revealed only after the call
has answered, so the candidate cannot behave one way when checked and another when timed.

A checked call's expected output is eager's on the same seed. Small outputs are compared
after the round, against eager's own timed calls; a copy of each checked call waits in both
workers until then. An output over `AT_ONCE_BYTES` is compared as soon as the candidate's
call is known to be checked, against eager's output computed for it then in the baseline
worker, between two calls and off every clock: at most one copy is held anywhere, where
three of a multi-GB output beside the inputs, the call's output and its copy made each
process hold six times the output on a task KernelBench sizes at gigabytes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from cudaopt.judge.checks.handover import allowed, ask_reference, compare_kept, timed_mismatch
from cudaopt.judge.timing.noise import Samples
from cudaopt.judge.verdict.verdict import Verdict, add_parts, phase
from cudaopt.judge.workers.child import Worker
from cudaopt.judge.workers.session import Session

REFILL_SHARE = 0.35  # of the checked calls, those that reuse the previous call's tensors
AT_ONCE_BYTES = 64 << 20  # outputs larger than this are checked call by call (see above)


@dataclass
class Plan:
    """One round's secret plan; it lives only in this (the parent) process."""

    seeds: list[int]
    refill: list[bool]
    guard: list[bool]
    checked: set[int]

    @classmethod
    def draw(cls, session: Session, calls: int, checks: int, guard_share: float) -> Plan:
        """`checks` calls have their outputs checked (at least one); about a third of those
        reuse the previous call's tensors, refilled (a candidate can tell those, but not which
        of the others are checked); a `guard_share` of calls is guarded."""
        order = list(range(calls))
        session.rand_shuffle(order)
        checked = set(order[:max(1, min(checks, calls))])
        refill = [i > 0 and i in checked and session.rand() < REFILL_SHARE for i in range(calls)]
        guard = [session.rand() < guard_share for _ in range(calls)]
        guard[order[-1]] = False  # at least one timed call
        return cls([session.seed() for _ in range(calls)], refill, guard, checked)


def timed_round(session: Session, names: list[str], plan: Plan, verdict: Verdict) -> Samples:
    """One round: the plan's calls for each of eager, compile and the candidate, in random
    order, and the checked calls' outputs compared (see above for when)."""
    order = [*names, "candidate"]
    session.rand_shuffle(order)
    at_once = output_bytes(session) > AT_ONCE_BYTES
    samples: Samples = {}
    mismatches: dict[str, list[str]] = {}
    for name in order:
        with session.candidate_held(name):
            found = _sequence(session, name, plan, verdict, at_once, mismatches)
        for key, values in found.items():
            samples.setdefault(key, []).extend(values)
    if not at_once:
        keys = [f"t{i}" for i in sorted(plan.checked)]
        mismatches = _compared(session, keys, verdict)
    for i in sorted(plan.checked):
        if mismatches.get(f"t{i}"):
            note = " (its inputs: the previous call's tensors, refilled)" if plan.refill[i] else ""
            verdict.violations.append(timed_mismatch(
                session, "output of a timed call is wrong (the candidate behaves differently "
                f"when timed){note}", mismatches[f"t{i}"][0]))
            break
    return samples


def output_bytes(session: Session) -> int:
    """Bytes of one call's outputs, as the verification saw them."""
    from cudaopt.judge.workers.tensors import dtype_named

    return sum(leaf["numel"] * dtype_named(leaf["dtype"]).itemsize
               for leaf in session.output_leaves)


def _compared(session: Session, keys: list[str], verdict: Verdict) -> dict[str, list[str]]:
    """The candidate's copies kept under `keys` against the baseline worker's."""
    parts: dict[str, float] = {}
    with phase(verdict, "timing.checks"):
        found = compare_kept(session, session.baseline, keys, session.outputs_dir("timed"),
                             parts)
    add_parts(verdict, "timing.checks", parts)
    return found


def _check_at_once(session: Session, key: str, seed: int,
                   verdict: Verdict) -> dict[str, list[str]]:
    """The candidate's last call, just known to be checked, kept under `key` and compared
    with eager's output on its seed, computed now in the baseline worker."""
    with phase(verdict, "timing.checks"):
        reply = _ask(session, session.candidate, True, verdict, "finish", keep=key)
        session.note_memory("candidate", reply)
        for op, args in (("prep", {"seed": seed, "refill": False, "keep": None}),
                         ("go", {"which": "eager"}), ("finish", {"keep": key})):
            ask_reference(session, op, session.options.timeout_s, session.baseline, **args)
    return _compared(session, [key], verdict)


def _sequence(session: Session, name: str, plan: Plan, verdict: Verdict, at_once: bool,
              mismatches: dict[str, list[str]]) -> Samples:
    """All calls of one contestant in a round. The parent's clock brackets each call from
    the `prep` that hands over its seed to the `go` reply that commits to its outputs: the
    window in which the worker can know its inputs and still change what it returns, so
    whatever the worker does there (drawing inputs, a hook on the draw, the call, the copy)
    is on this clock, which no worker can touch. With `at_once`, a checked call of the
    candidate's is compared before its next call (into `mismatches`)."""
    candidate = name == "candidate"
    worker = session.candidate if candidate else session.baseline
    # eager's outputs are the reference for the checks made after the round
    kept = candidate or (name == "eager" and not at_once)
    found: Samples = {"events": [], "host": [], "window": []}
    keep = None
    for i, seed in enumerate(plan.seeds):
        start = time.perf_counter()
        with phase(verdict, "timing.inputs"):
            _ask(session, worker, candidate, verdict, "prep", seed=seed, refill=plan.refill[i],
                 keep=keep)
        args = {"guard": plan.guard[i]} if candidate else {"which": name}
        went = time.perf_counter()
        reply = _ask(session, worker, candidate, verdict, "go", **args)
        done = time.perf_counter()
        add_parts(verdict, "timing", {"calls": done - went})
        keep = f"t{i}" if kept and i in plan.checked else None
        if keep:
            session.commit(keep, reply, candidate)
        if keep and at_once:
            mismatches.update(_check_at_once(session, keep, seed, verdict))
            keep = None
        if not (candidate and plan.guard[i]):
            found["events"].append(reply.get("ms", 0.0))  # typed on arrival (`child`)
            found["host"].append(reply.get("host_ms", 0.0))
            found["window"].append((done - start) * 1e3)
    reply = _ask(session, worker, candidate, verdict, "finish", keep=keep)
    session.note_memory("candidate" if candidate else "baseline", reply)
    if candidate:
        return {"candidate": found["events"], "candidate_host": found["host"],
                "candidate_window": found["window"]}
    return {name: found["events"],
            "overhead": [w - h for w, h in zip(found["window"], found["host"], strict=True)],
            "protocol": [w - e for w, e in zip(found["window"], found["events"], strict=True)],
            "gap": [h - m for h, m in zip(found["host"], found["events"], strict=True)]}


def _ask(session: Session, worker: Worker, candidate: bool, verdict: Verdict, op: str,
         **args: Any) -> dict[str, Any]:
    """One step; a candidate's violations go straight into the verdict."""
    timeout = session.options.timeout_s
    if not candidate:
        return ask_reference(session, op, timeout, worker, **args)
    reply = worker.call(op, timeout, **args)
    found = allowed(session, reply["violations"])
    verdict.violations.extend(v for v in found if v not in verdict.violations)
    return reply
