"""Outputs handed over by the candidate and compared in the reference worker, and the
reference's replies: what the verification and the timed rounds share.

The judge names the outputs it checks and what each must digest to (see `digest`); the
candidate only says where its copies are, and even that is read as hostile input.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from cudaopt.judge.checks.streams import STALE
from cudaopt.judge.workers.child import Worker, WorkerFailure
from cudaopt.judge.workers.session import Session

#: A kept copy that is not the one its call committed to: written after the call returned.
FORGED = ("output changed after its call returned: the copy handed over for checking is not "
          "the one the call committed to")


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


def compare_kept(session: Session, reference: Worker, keys: list[str], out_dir: Path,
                 parts_s: dict[str, float] | None = None) -> dict[str, list[str]]:
    """Compare the candidate's kept output copies with the reference's, key by key. The
    keys are the judge's: a key the candidate hands over nothing for compares as wrong, and
    a copy that is not the one its call committed to is named as changed (see `digest`)."""
    found = compare_replies(session, reference, keys, out_dir, parts_s)
    return {key: ([f"{FORGED} ({reply['mismatch'][0]})"] if reply.get("forged")
                  else reply["mismatch"]) for key, reply in found.items()}


def compare_replies(session: Session, reference: Worker, keys: list[str], out_dir: Path,
                    parts_s: dict[str, float] | None = None,
                    **extra: Any) -> dict[str, dict[str, Any]]:
    """`compare_kept`, with the reference's whole reply per key (`extra` goes with each).
    `parts_s` collects where the time went: the candidate's `dump` of its copies, and the
    reference's parts of each comparison (see `ReferenceWorker.compare`)."""
    pool, parts = session.pool, {} if parts_s is None else parts_s
    started = time.perf_counter()
    manifests = _manifests(session, keys, out_dir, share=pool.share_cuda)
    parts["dump"] = parts.get("dump", 0.0) + time.perf_counter() - started
    digests = {key: session.committed.pop(key, "") for key in keys}
    found = {key: _compare(session, reference, key, manifests.get(key), digests[key], extra)
             for key in keys}
    failed = [key for key, reply in found.items() if "ipc_failed" in reply]
    if failed:  # this machine cannot share device memory between processes: files from now
        pool.share_cuda = False
        session.ipc_refused = found[failed[0]]["ipc_failed"]
        manifests = _manifests(session, keys, out_dir, again=True)
        found.update({key: _compare(session, reference, key, manifests.get(key),
                                    digests[key], extra) for key in failed})
    for reply in found.values():
        for part, spent in reply.pop("parts_s", {}).items():
            parts[part] = parts.get(part, 0.0) + spent
    session.clear(out_dir)
    return found


def _manifests(session: Session, keys: list[str], out_dir: Path,
               **args: Any) -> dict[str, Any]:
    """Where the candidate put its copies of the outputs kept under `keys`: hostile input,
    so anything but a manifest per key is no manifest."""
    reply = session.candidate.call("dump", session.options.timeout_s, keys=keys,
                                   out_dir=str(out_dir), **args)
    manifests = reply.get("manifests")
    if not isinstance(manifests, dict):
        return {}
    return {key: manifests[key] for key in keys if isinstance(manifests.get(key), dict)}


def _compare(session: Session, reference: Worker, key: str, manifest: dict[str, Any] | None,
             digest: str, extra: dict[str, Any]) -> dict[str, Any]:
    options = session.options
    return ask_reference(session, "compare", options.timeout_s, reference, key=key,
                         manifest=manifest, digest=digest, atol=options.atol,
                         rtol=options.rtol, **extra)


def timed_mismatch(session: Session, what: str, mismatch: str) -> str:
    """The rule a wrong timed output broke: a copy changed after its call (`FORGED`), a
    stale output where the candidate gives one output for two different inputs
    (`CandidateWorker.stale_probe`), else `what`."""
    if mismatch.startswith(FORGED):
        return mismatch
    try:
        seeds = [session.seed(), session.seed()]
        same = session.candidate.call("stale_probe", session.options.timeout_s,
                                      seeds=seeds).get("same")
    except WorkerFailure:
        same = False
    if same:
        return (f"{STALE} (a timed call's output was wrong, and two calls on different "
                f"inputs returned the same output): {mismatch}")
    return f"{what}: {mismatch}"


def allowed(session: Session, found: list[str]) -> list[str]:
    """The candidate's violations, less input mutation when the task itself mutates inputs."""
    return [v for v in found if not (session.inputs_mutable and "modified input" in v)]


