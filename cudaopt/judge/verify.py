"""Loading both workers and the verification trials."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from cudaopt.judge.runner import WorkerFailure
from cudaopt.judge.session import Session
from cudaopt.judge.verdict import Status, Verdict


def ask_reference(session: Session, op: str, timeout_s: float, **args: Any) -> dict[str, Any]:
    """A call to the reference worker; its failures blame the task, not the candidate."""
    try:
        return session.reference.call(op, timeout_s, **args)
    except WorkerFailure as exc:
        raise WorkerFailure("reference", str(exc), exc.reply) from exc


def load(session: Session, task: Path, candidate: Path, build_dir: Path | None,
         verdict: Verdict, say: Callable[[str], None]) -> None:
    options = session.options
    say("loading task and candidate")
    init_seed = session.seed()
    state_path = session.scratch / "state_dict.pt"
    info = ask_reference(session, "load", options.timeout_s, task=str(task.resolve()),
                         device=session.device, init_seed=init_seed, state_path=str(state_path))
    verdict.device_name, verdict.torch_version = info["device_name"], info["torch_version"]
    try:
        reply = session.candidate.call(
            "load", options.build_timeout_s, task=str(task.resolve()),
            candidate=str(candidate.resolve()), device=session.device, init_seed=init_seed,
            state_path=str(state_path), allow=options.allow,
            build_dir=str(build_dir) if build_dir else None)
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
    verdict.compiled = True
    if build_dir is None:
        verdict.build_s = reply["import_s"]  # load_inline builds happen at import
    verdict.violations += reply.get("violations", [])


def verify(session: Session, verdict: Verdict, say: Callable[[str], None]) -> None:
    """`options.trials` trials, each on fresh inputs from a secret seed.

    The reference output is computed in its own process and kept alive there; the candidate
    runs on its own copy of the inputs, after memory the size of the expected outputs has
    been filled with NaN and freed, so an output buffer it never writes cannot pass.
    """
    options = session.options
    poison: list[dict[str, Any]] = []
    out_dir = session.outputs_dir("verify")
    for trial in range(options.trials):
        say(f"verifying: trial {trial + 1}/{options.trials}")
        seed = session.seed()
        session.reference.send("reference", seed=seed, key="v")
        session.candidate.send("run", seed=seed, out_dir=str(out_dir), tag=f"v{trial}",
                               poison=poison)
        try:
            poison = session.reference.receive(options.timeout_s)["leaves"]
        except WorkerFailure as exc:
            raise WorkerFailure("reference", str(exc), exc.reply) from exc
        run = session.candidate.receive(options.timeout_s)
        verdict.trials = trial + 1
        _add(verdict.violations, run["violations"])
        if run["manifest"] is None:
            return
        mismatch = ask_reference(session, "compare", options.timeout_s, key="v",
                                 manifest=run["manifest"], atol=options.atol,
                                 rtol=options.rtol)["mismatch"]
        session.clear(out_dir)
        if mismatch:
            verdict.status = Status.WRONG
            verdict.mismatch = [f"trial {trial + 1}:"] + mismatch
            return
        if verdict.violations:
            break
    verdict.correct = True


def _add(into: list[str], new: list[str]) -> None:
    into.extend(v for v in new if v not in into)
