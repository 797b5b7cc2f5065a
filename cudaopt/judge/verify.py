"""Loading both workers and the verification trials."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from cudaopt.judge.runner import Worker, WorkerFailure
from cudaopt.judge.session import Session
from cudaopt.judge.streams import RULE
from cudaopt.judge.verdict import Status, Verdict, add_parts


def reference_reply(worker: Worker, timeout_s: float) -> dict[str, Any]:
    """A reply from a reference worker; its failures blame the task, not the candidate."""
    try:
        return worker.receive(timeout_s)
    except WorkerFailure as exc:
        raise WorkerFailure("reference", str(exc), exc.reply) from exc


def ask_reference(session: Session, op: str, timeout_s: float, worker: Worker | None = None,
                  **args: Any) -> dict[str, Any]:
    worker = worker or session.reference
    worker.send(op, **args)
    return reference_reply(worker, timeout_s)


def load(session: Session, task: Path, candidate: Path, build_dir: Path | None,
         verdict: Verdict, say: Callable[[str], None]) -> None:
    options = session.options
    say("loading task and candidate")
    init_seed, state_path = session.init_seed, session.state_path
    # the candidate imports (and JIT-builds) while the reference builds the model whose
    # weights it then loads
    session.candidate.send("import", task=str(session.pool.task_copy(task)),
                           candidate=str(candidate.resolve()), device=session.device,
                           threads=session.threads, allow=options.allow,
                           build_dir=str(build_dir) if build_dir else None)
    if session.reference_info is None:
        session.reference_info = ask_reference(
            session, "load", options.timeout_s, task=str(task.resolve()), device=session.device,
            init_seed=init_seed, state_path=str(state_path), threads=session.threads)
        add_parts(verdict, "load.reference", session.reference_info.pop("parts_s", {}))
        say("task loaded (reference worker)")
    info = session.reference_info
    verdict.device_name, verdict.torch_version = info["device_name"], info["torch_version"]
    verdict.threads = session.threads
    session.reference.send("warm", seed=session.seed())  # first-call costs, while B loads
    try:
        imported = session.candidate.receive(options.build_timeout_s)
        reply = session.candidate.call("load", options.build_timeout_s, init_seed=init_seed,
                                       state_path=str(state_path))
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
    """`options.trials` trials, each on fresh inputs from a secret seed.

    The reference output is computed in its own process and kept alive there; the candidate
    runs on its own copy of the inputs (from the second trial on, after memory the size of
    the expected outputs has been filled with NaN and freed), so an output buffer it never
    writes cannot pass. Every second trial refills the previous trial's input tensors with
    the new values instead of drawing new ones, so a result cached by tensor identity,
    pointer or shape is stale.
    """
    options = session.options
    out_dir = session.outputs_dir("verify")
    for trial in range(options.trials):
        say(f"verifying: trial {trial + 1}/{options.trials}{session.memory_note()}")
        seed, refill = session.seed(), trial % 2 == 1
        found: list[str] = []
        output = True
        for op, ref_args, cand_args in (
                ("prep", {"seed": seed, "refill": refill},
                 {"seed": seed, "refill": refill, "poison": session.output_leaves}),
                ("go", {"which": "eager"}, {"guard": True}),
                ("finish", {"keep": "v"}, {"keep": "v"})):
            ref, cand = _step(session, op, ref_args, cand_args)
            session.note_memory("reference", ref)
            session.note_memory("candidate", cand)
            session.inputs_mutable |= ref.get("mutates", False)
            session.output_leaves = ref.get("leaves", session.output_leaves)
            found += cand["violations"]
            output = output and cand.get("output", True)
        verdict.trials = trial + 1
        _add(verdict.violations, allowed(session, found))
        if not output:
            return
        mismatch = compare_kept(session, session.reference, ["v"], out_dir)["v"]
        if mismatch:
            verdict.status = Status.WRONG
            verdict.mismatch = [_trial_label(trial, refill)] + mismatch
            return
        if verdict.violations:
            break
    verdict.correct = True


def _step(session: Session, op: str, ref_args: dict[str, Any],
          cand_args: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The same step of a trial in both workers at once."""
    session.reference.send(op, **ref_args)
    session.candidate.send(op, **cand_args)
    ref = reference_reply(session.reference, session.options.timeout_s)
    return ref, session.candidate.receive(session.options.timeout_s)


def compare_kept(session: Session, reference: Worker, keys: list[str],
                 out_dir: Path) -> dict[str, list[str]]:
    """Compare the candidate's kept output copies with the reference's, key by key; a key
    the candidate has no copy for (its output was not accepted) compares as agreeing."""
    pool, timeout_s = session.pool, session.options.timeout_s
    manifests = session.candidate.call("dump", timeout_s, keys=keys, out_dir=str(out_dir),
                                       share=pool.share_cuda)["manifests"]
    found = {key: _compare(session, reference, key, manifests.get(key)) for key in keys}
    failed = [key for key, reply in found.items() if "ipc_failed" in reply]
    if failed:  # this machine cannot share device memory between processes: files from now
        pool.share_cuda = False
        session.ipc_refused = found[failed[0]]["ipc_failed"]
        manifests = session.candidate.call("dump", timeout_s, keys=keys, out_dir=str(out_dir),
                                           again=True)["manifests"]
        found.update({key: _compare(session, reference, key, manifests.get(key))
                      for key in failed})
    session.clear(out_dir)
    return {key: reply["mismatch"] for key, reply in found.items()}


def _compare(session: Session, reference: Worker, key: str,
             manifest: dict[str, Any] | None) -> dict[str, Any]:
    options = session.options
    return ask_reference(session, "compare", options.timeout_s, reference, key=key,
                         manifest=manifest, atol=options.atol, rtol=options.rtol)


def allowed(session: Session, found: list[str]) -> list[str]:
    """The candidate's violations, less input mutation when the task itself mutates inputs."""
    return [v for v in found if not (session.inputs_mutable and "modified input" in v)]


def _trial_label(trial: int, refill: bool) -> str:
    if not refill:
        return f"trial {trial + 1}:"
    return (f"trial {trial + 1} (the previous trial's input tensors, refilled with new values: "
            "a result cached by tensor identity, pointer or shape comes out stale):")


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
        found += cand.call("finish", timeout_s, keep="g")["violations"]
        for op, args in (("prep", {"seed": seed}), ("go", {"which": "eager"}),
                         ("finish", {"keep": "g"})):
            ask_reference(session, op, timeout_s, **args)
        mismatch = compare_kept(session, session.reference, ["g"],
                                session.outputs_dir("streams"))["g"]
        if mismatch:
            found.append(f"{RULE}: a CUDA graph replay of forward did not produce its output, "
                         f"so part of the work ran outside the capturing stream ({mismatch[0]})")
    if reply["check"] == "graph":
        verdict.stream_check = "CUDA graph capture and replay, and the current-stream snapshot"
    else:
        verdict.stream_check = ("current-stream snapshot (CUDA graph capture was not possible: "
                                f"{reply['why']})")
    _add(verdict.violations, allowed(session, found))
