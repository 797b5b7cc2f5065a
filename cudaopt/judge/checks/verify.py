"""Loading both workers and the verification trials."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cudaopt.judge.building.extdir import seed_build
from cudaopt.judge.checks import signal, variants
from cudaopt.judge.checks.handover import (
    FORGED,
    allowed,
    ask_reference,
    compare_kept,
    compare_replies,
    reference_reply,
)
from cudaopt.judge.checks.streams import RULE, STALE
from cudaopt.judge.verdict.verdict import Status, Verdict, add_parts, phase
from cudaopt.judge.workers.child import WorkerFailure
from cudaopt.judge.workers.session import Session


def load(session: Session, task: Path, candidate: Path, build_dir: Path | None,
         verdict: Verdict, say: Callable[[str], None]) -> None:
    options = session.options
    say("loading task and candidate")
    init_seed, state_path = session.init_seed, session.state_path
    session.candidate_path = candidate
    if session.candidate.caches:  # isolated: its own builds, an earlier one copied in
        seed_build(candidate, session.candidate.caches)
    # the candidate imports (and JIT-builds) while the reference builds the model whose
    # weights it then loads
    session.candidate.send("import", task=str(session.pool.task_copy(task)),
                           candidate=str(candidate.resolve()), device=session.device,
                           threads=session.threads, allow=options.allow,
                           build_dir=str(build_dir) if build_dir else None)
    if session.reference_info is None:
        session.reference_info = ask_reference(
            session, "load", options.timeout_s, task=str(task.resolve()), device=session.device,
            init_seed=init_seed, state_path=str(state_path), threads=session.threads,
            state_digest=session.pool.lender is not None)
        add_parts(verdict, "load.reference", session.boot_waited(
            session.reference, session.reference_info.pop("parts_s", {})))
        say("task loaded (reference worker)")
    info = session.reference_info
    verdict.device_name, verdict.torch_version = info["device_name"], info["torch_version"]
    verdict.threads = session.threads
    session.reference.send("warm", seed=session.seed())  # first-call costs, while B loads
    try:
        waited = time.perf_counter()
        imported = session.candidate.receive(options.build_timeout_s)
        staging = time.perf_counter()
        session.candidate.call("stage", options.timeout_s, state_path=str(state_path))
        turn = time.perf_counter()
        with session.pool.candidate_turn(session.device):
            started = time.perf_counter()
            reply = session.candidate.call("load", options.build_timeout_s,
                                           init_seed=init_seed, state_path=str(state_path))
        # `import` is the candidate's own clock; `turn` waits for another judgement's timing
        add_parts(verdict, "load.candidate", {
            "import": imported["import_s"], "import_wait": staging - waited,
            "stage": turn - staging, "turn": started - turn,
            "model": time.perf_counter() - started})
        add_parts(verdict, "load.candidate.import", session.boot_waited(
            session.candidate, _numbers(imported.get("parts_s"))))
    except WorkerFailure as exc:
        if exc.kind == "build":
            verdict.status, verdict.error = Status.BUILD_FAILED, str(exc)
        elif exc.kind == "state_dict":
            verdict.compiled = True
            verdict.status, verdict.error = Status.WRONG, str(exc)
        elif exc.kind == "import":
            verdict.status, verdict.error = Status.CRASH, f"importing the candidate failed:\n{exc}"
        else:
            raise
        return
    say("candidate loaded")
    reference_reply(session.reference, options.timeout_s)  # the warm-up's
    verdict.compiled = True
    if build_dir is None:
        verdict.build_s = imported["import_s"]  # load_inline builds happen at import
    verdict.violations += reply.get("violations", [])


def verify(session: Session, verdict: Verdict, say: Callable[[str], None]) -> None:
    """`options.trials` trials on fresh inputs from secret seeds, then
    `options.derived_trials` on inputs of other structure derived from them (see
    `variants`), in a secret order.

    The reference output is computed in its own process and kept alive there; the candidate
    runs on its own copy of the inputs (from the second trial on, after memory the size of
    the expected outputs has been filled with NaN and freed), so an output buffer it never
    writes cannot pass. Every second trial refills the previous trial's input tensors with
    the new values instead of drawing new ones, so a result cached by tensor identity,
    pointer or shape is stale. Across all trials the candidate's outputs must move the way
    the reference's do (see `signal`): agreeing within tolerance on each input alone is not
    enough when the output hardly depends on the input.
    """
    out_dir = session.outputs_dir("verify")
    trials = _plan(session)
    signal_seed = session.seed()
    for trial, variant in enumerate(trials):
        say(f"verifying: trial {trial + 1}/{len(trials)}{session.memory_note()}")
        seed, refill = session.seed(), trial % 2 == 1
        started = time.perf_counter()
        found, output = _trial(session, seed, refill, variant, verdict)
        if trial == 0:  # a Triton kernel compiles and autotunes here, a CUDA module loads
            verdict.phases_s["verify.first_trial"] = time.perf_counter() - started
        verdict.trials = min(trial + 1, session.options.trials)  # on the task's own draws
        if isinstance(output, str):
            assert variant is not None  # `_trial` skips only an input derived from the draws
            verdict.inputs_skipped.append(f"{variants.describe(variant)}: {output}")
        _add(verdict.violations, allowed(session, found))
        if isinstance(output, str):
            continue
        if not output:
            return
        with phase(verdict, "verify.compare"):
            reply = _compare_trial(session, out_dir, trial, signal_seed, variant is None,
                                   verdict)
        if reply.get("forged"):
            _add(verdict.violations, [f"{FORGED} ({reply['mismatch'][0]})"])
        if variant is not None:
            verdict.inputs_structured.append(variants.describe(variant))
        if reply["mismatch"]:
            verdict.status = Status.WRONG
            verdict.mismatch = [_trial_label(trial, refill, variant)] + reply["mismatch"]
            if "stale" in reply:
                _add(verdict.violations, [f"{STALE} (trial {trial + 1} got the output of "
                                          f"trial {reply['stale'] + 1})"])
            _signal(session, verdict, scale=False)  # wrong already: only name what it did
            return
        if verdict.violations:
            break
    _signal(session, verdict, scale=True)
    verdict.correct = not any(v.startswith(signal.RULES) for v in verdict.violations)


def _plan(session: Session) -> list[dict[str, Any] | None]:
    """None for a fresh trial, else the variant: the task's own draws first (the first
    tells the judge the outputs' sizes, and together they are the signal check's baseline
    when a derived input fails), then the derived ones, in a secret order."""
    extra: list[dict[str, Any] | None] = list(variants.plan(
        session.rand, session.seed, session.options.derived_trials))
    session.rand_shuffle(extra)
    return [None] * session.options.trials + extra


def _trial(session: Session, seed: int, refill: bool, variant: dict[str, Any] | None,
           verdict: Verdict) -> tuple[list[str], bool | str]:
    """One trial in both workers: (the candidate's violations, whether it gave an output),
    or why the input was skipped, in place of the latter, when the reference itself cannot
    handle it. On a derived input the reference runs first, so a candidate never fails on
    an input the task does not accept. Each step's seconds go to `verify.<step>` in
    `verdict.phases_s`: a trial is a few round trips to two processes, and a slow one must
    show which."""
    found: list[str] = []
    prep: dict[str, Any] = {"seed": seed, "refill": refill, "variant": variant}
    cand_prep = {**prep, "poison": session.output_leaves}
    timeout_s = session.options.timeout_s
    if variant is None:
        ref, cand = _step(session, "prep", prep, cand_prep, verdict)
        found += cand["violations"]
        session.inputs_mutable |= ref.get("mutates", False)
        ref, cand = _step(session, "go", {"which": "eager"}, {"guard": True}, verdict)
    else:  # one worker at a time: deriving a multi-GB input needs room for its temporaries
        with phase(verdict, "verify.derived"):
            ref = ask_reference(session, "prep", timeout_s, **prep)
            if "skip" not in ref:
                session.inputs_mutable |= ref.get("mutates", False)
                ref = ask_reference(session, "go", timeout_s, which="eager", tolerant=True)
        if "skip" in ref:
            _, cand = _step(session, "finish", {}, {}, verdict)
            return found + cand["violations"], ref["skip"]
        with phase(verdict, "verify.derived"):
            found += session.candidate.call("prep", timeout_s, **cand_prep)["violations"]
            cand = session.candidate.call("go", timeout_s, guard=True)
    session.commit("v", cand)
    session.output_leaves = ref.get("leaves", session.output_leaves)
    found += cand["violations"]
    output = cand.get("output", True)
    ref, cand = _step(session, "finish", {"keep": "v"}, {"keep": "v"}, verdict)
    for worker, reply in (("reference", ref), ("candidate", cand)):
        session.note_memory(worker, reply)
    session.inputs_mutable |= ref.get("mutates", False)
    return found + cand["violations"], output


def _compare_trial(session: Session, out_dir: Path, trial: int, seed: int, fresh: bool,
                   verdict: Verdict) -> dict[str, Any]:
    info, parts = {"trial": trial, "seed": seed, "fresh": fresh}, dict[str, float]()
    reply = compare_replies(session, session.reference, ["v"], out_dir, parts, signal=info)
    add_parts(verdict, "verify.compare", parts)
    return reply["v"]


def _signal(session: Session, verdict: Verdict, scale: bool) -> None:
    """The candidate's outputs over every trial so far against the reference's; `scale`:
    also at the output's own scale, which only matters where allclose held throughout."""
    options = session.options
    with phase(verdict, "verify.signal"):
        findings = ask_reference(session, "signal", options.timeout_s, rtol=options.rtol,
                                 scale=scale)["findings"]
    if findings:
        _add(verdict.violations, findings[:1])


def _step(session: Session, op: str, ref_args: dict[str, Any], cand_args: dict[str, Any],
          verdict: Verdict) -> tuple[dict[str, Any], dict[str, Any]]:
    """The same step of a trial in both workers at once."""
    with phase(verdict, f"verify.{op}"):
        session.reference.send(op, **ref_args)
        session.candidate.send(op, **cand_args)
        ref = reference_reply(session.reference, session.options.timeout_s)
        return ref, session.candidate.receive(session.options.timeout_s)


def _trial_label(trial: int, refill: bool, variant: dict[str, Any] | None = None) -> str:
    notes = []
    if variant is not None:
        notes.append(f"inputs of other structure, derived from the task's draws: "
                     f"{variants.describe(variant)}")
    if refill:
        notes.append("the previous trial's input tensors, refilled with new values: a result "
                     "cached by tensor identity, pointer or shape comes out stale")
    return f"trial {trial + 1} ({'; '.join(notes)}):" if notes else f"trial {trial + 1}:"


def _add(into: list[str], new: list[str]) -> None:
    into.extend(v for v in new if v not in into)


def check_streams(session: Session, verdict: Verdict, say: Callable[[str], None]) -> None:
    """CUDA: is all the work of a call ordered with the current stream when it returns?
    (see `streams`). The last step in the candidate's process: a failed graph capture may
    leave it unusable. A replay's outputs, on inputs the reference also gets, are compared
    like any trial's; the verdict says which check ran."""
    if session.device != "cuda":
        return
    say("checking that forward leaves no work behind on other streams")
    timeout_s, seed = session.options.timeout_s, session.seed()
    cand = session.candidate
    found = cand.call("prep", timeout_s, seed=session.seed(), poison=session.output_leaves)
    reply = cand.call("streams", timeout_s, seed=seed)
    found = found["violations"] + reply["violations"]
    if reply["replayed"]:
        session.commit("g", reply)
        found += cand.call("finish", timeout_s, keep="g")["violations"]
        for op, args in (("prep", {"seed": seed}), ("go", {"which": "eager"}),
                         ("finish", {"keep": "g"})):
            ask_reference(session, op, timeout_s, **args)
        mismatch = compare_kept(session, session.reference, ["g"],
                                session.outputs_dir("streams"))["g"]
        # its inputs and outputs drawn anew: given back (a kept reference held 18.8 GiB
        # after 6 GiB-input tasks)
        session.note_memory("reference", ask_reference(session, "trim", timeout_s))
        if mismatch and reply.get("stale"):
            found.append(f"{STALE}: captured into a CUDA graph, forward launched nothing and "
                         f"returned an output an earlier call had returned ({mismatch[0]})")
        elif mismatch:
            found.append(f"{RULE}: a CUDA graph replay of forward did not produce its output, "
                         f"so part of the work ran outside the capturing stream ({mismatch[0]})")
    if reply["check"] == "graph":
        verdict.stream_check = "CUDA graph capture and replay, and the current-stream snapshot"
    else:
        verdict.stream_check = ("current-stream snapshot (CUDA graph capture was not possible: "
                                f"{reply['why']})")
    _add(verdict.violations, allowed(session, found))
    if reply.get("l2_persisting_bytes"):
        verdict.warnings.append(
            f"the candidate set aside {reply['l2_persisting_bytes']} bytes of L2 for "
            "persisting accesses; the judge reset it (cuCtxResetPersistingL2Cache, limit 0) "
            "before every timed call, so the cold timing stayed cold")


def _numbers(parts: object) -> dict[str, float]:
    """The candidate's own account of its import's parts, kept only where it is a number in
    a sane range: it comes from the process under judgement."""
    if not isinstance(parts, dict):
        return {}
    return {str(k)[:32]: float(v) for k, v in list(parts.items())[:8]
            if isinstance(v, int | float) and 0 <= v < 1e5}
