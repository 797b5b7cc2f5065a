"""`check`: build, verify and time one candidate against its task; returns a `Verdict`."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cudaopt.judge.building.caches import worker_env
from cudaopt.judge.building.kernels import build_kernels, default_build_dir, kernel_sources
from cudaopt.judge.building.shared import kernel_store
from cudaopt.judge.checks import scan
from cudaopt.judge.checks.backend import candidate_backend, refuse_unrunnable
from cudaopt.judge.checks.verify import load
from cudaopt.judge.verdict.options import ISOLATION_MODES, JudgeOptions, Progress, resolve_device
from cudaopt.judge.verdict.reward import milestone_reward
from cudaopt.judge.verdict.verdict import Status, Verdict, phase
from cudaopt.judge.workers.child import WorkerFailure
from cudaopt.judge.workers.pool import JudgePool
from cudaopt.judge.workers.session import Session
from cudaopt.task import BadInput, validate_candidate, validate_task


def check(task: Path, candidate: Path, options: JudgeOptions | None = None,
          progress: Progress | None = None, pool: JudgePool | None = None) -> Verdict:
    """Judge `candidate` (a model_new.py) against `task`. Never raises for candidate faults.

    Pass a `JudgePool` to judge many candidates of one task with warm workers.
    """
    options = options or JudgeOptions()
    say = progress or (lambda message: None)
    verdict = Verdict()
    own_pool = pool is None
    try:
        validate_task(task)
        validate_candidate(candidate)
        if options.isolation not in ISOLATION_MODES:
            raise BadInput(f"unknown isolation {options.isolation!r}: use one of "
                           f"{', '.join(ISOLATION_MODES)}")
        verdict.device = resolve_device(options.device)
        verdict.backend = candidate_backend(candidate)
        refuse_unrunnable(verdict.backend, verdict.device)
        if pool is None:
            say("starting workers")
            pool = JudgePool(worker_env(options), keep_warm=False,
                             isolate=options.isolation != "off")
            pool.prestart_for(options, verdict.device)
        findings = scan.scan_candidate(candidate)
        verdict.violations += [f.text for f in findings if f.severity == "violation"]
        verdict.warnings += [f.text for f in findings if f.severity == "warning"]
        verdict = _judge(task, candidate, options, say, verdict, pool)
    except BadInput as exc:
        verdict.status, verdict.error = Status.BAD_INPUT, str(exc)
        return verdict
    finally:
        if own_pool and pool is not None:
            pool.close()
    required = options.isolation == "required"
    verdict.reward = milestone_reward(verdict, options.margin, required)
    if verdict.kernels_ran == [] and verdict.clean:
        verdict.warnings.append("no kernel of the candidate's own ran on its guarded calls "
                                "(every kernel came from a PyTorch operator, or none ran): "
                                "no speed milestone")
    if verdict.isolation and not verdict.isolated and verdict.clean:
        verdict.warnings.append(
            f"the candidate ran without isolation ({verdict.isolation}): it could reach the "
            "judge's other processes and caches, so "
            + ("no speed milestone is awarded (--isolation optional accepts that)" if required
               else "its speedups stand only because isolation was not required"))
    return verdict


def prepare(task: Path, options: JudgeOptions, pool: JudgePool) -> bool:
    """Start loading `task` into `pool`'s baseline process and compiling its torch.compile
    baseline, for the judgements to come; returns at once. A run calls it as it starts: its
    first timed judgement then finds the baselines compiled (seconds to tens of seconds
    cold) instead of compiling them after the candidate's build. Nothing of a candidate is
    involved. False, doing nothing, when there is nothing to time, the pool is one-off or
    already judging, or `task` is not a valid task (its judgement will say why)."""
    if not (options.profile and pool.keep_warm) or not pool.busy.acquire(blocking=False):
        return False
    try:
        validate_task(task)
        with Session(options, resolve_device(options.device), task, pool) as session:
            session.start_baseline(task)
        return True
    except BadInput:
        return False
    finally:
        pool.busy.release()


def _judge(task: Path, candidate: Path, options: JudgeOptions, say: Progress, verdict: Verdict,
           pool: JudgePool) -> Verdict:
    """The device is held only while it verifies and times: the build, both workers' start,
    the candidate's import (and its `load_inline` compile), the baseline's torch.compile
    and the model's weights all happen before, so another judgement's timing on the same
    device overlaps them instead of waiting for them."""
    verdict.isolated, verdict.isolation = pool.isolation.isolated, pool.isolation.how
    with pool.busy, Session(options, verdict.device, task, pool) as session:
        session.take_workers()
        if options.profile:
            session.start_baseline(task)
        with phase(verdict, "build"):
            build_dir = _build(candidate, verdict, options, say)
        if verdict.status is Status.BUILD_FAILED:
            return verdict
        try:
            with phase(verdict, "load"):
                load(session, task, candidate, build_dir, verdict, say)
            if verdict.status is Status.OK:
                _run(session, verdict, lambda: _device(pool, verdict, say), say)
                verdict.kernels_ran = _kernels_ran(session)
        except WorkerFailure as exc:
            _fail(verdict, exc, session)
        verdict.device_memory_gib = session.device_memory_gib()
        if session.ipc_refused:
            verdict.warnings.append(
                "CUDA outputs could not be shared between the judge's processes "
                f"({session.ipc_refused}); they went through host memory, which is slower")
    if verdict.violations and verdict.status in (Status.OK, Status.WRONG):
        verdict.status = Status.VIOLATION  # a broken rule explains a wrong result, not vice versa
    return verdict


@contextmanager
def _device(pool: JudgePool, verdict: Verdict, say: Progress) -> Iterator[None]:
    """The device's locks (this pool's, and a GPU's host-wide one), the wait in `lock`."""
    started = time.perf_counter()
    gpu = pool.gpu_lock(verdict.device)
    holder = getattr(gpu, "waiting_on", lambda: None)()
    if holder:
        say(f"waiting for the GPU, which another judge is using ({holder})")
    with pool.lock, gpu:
        verdict.phases_s["lock"] = verdict.phases_s.get("lock", 0.0) + (
            time.perf_counter() - started)
        yield


def _build(candidate: Path, verdict: Verdict, options: JudgeOptions,
           say: Progress) -> Path | None:
    kernels = candidate.resolve().parent / "kernels"
    if not kernels.is_dir() or not kernel_sources(kernels):
        return None  # an emptied kernels/ folder is no kernels, not a failed build
    say("building kernels/")
    build_dir = options.build_dir or default_build_dir(candidate, verdict.device)
    result = build_kernels(kernels, build_dir, options.build_timeout_s, kernel_store(options))
    verdict.build_s = result.seconds
    if not result.ok:
        verdict.status = Status.BUILD_FAILED
        verdict.error = _tail(result.log, 6000)
    return build_dir


def _run(session: Session, verdict: Verdict, device: Callable[[], Any],
         say: Progress) -> None:
    """Verify, then time, each holding the device (`device()`); the device is let go in
    between while the baselines are awaited, which mostly overlap the verification."""
    from cudaopt.judge.checks.handover import ask_reference
    from cudaopt.judge.checks.verify import check_streams, verify
    from cudaopt.judge.timing.profile import await_baselines, profile

    options = session.options
    with device(), phase(verdict, "verify"):
        verify(session, verdict, say)
        session.note_memory("reference", ask_reference(session, "trim", options.timeout_s))
    verdict.verify_s = verdict.phases_s["verify"]
    if verdict.status is not Status.OK or verdict.violations:
        return
    if options.profile:
        await_baselines(session, verdict, say)
    with device():
        if options.profile:
            started = time.perf_counter()
            profile(session, verdict, say)
            verdict.profile_s = time.perf_counter() - started
        with phase(verdict, "streams"):
            check_streams(session, verdict, say)  # last: it may leave the candidate unusable


def _kernels_ran(session: Session) -> list[str] | None:
    """The candidate's own kernels its profiled back-to-back burst launched (CUDA, where
    the breakdown ran): the profiler runs after every timed call, never before one, since
    a process that was profiled launches slower ever after."""
    return None if session.kernels is None else sorted(session.kernels)


def _fail(verdict: Verdict, exc: WorkerFailure, session: Session) -> None:
    """Map a worker failure to a verdict; a failing reference means the task itself is bad."""
    if exc.kind == "reference":
        verdict.status = Status.BAD_INPUT
        verdict.error = f"the task itself failed to run:\n{exc}"
        if exc.reply.get("kind") == "OutOfMemoryError":
            verdict.error = ("the task ran out of device memory in the judge's reference process"
                             f"{session.memory_note()}; three processes share the device, and "
                             f"the candidate's may hold memory too:\n{exc}")
        return
    verdict.status = Status.TIMEOUT if exc.kind == "timeout" else Status.CRASH
    verdict.error = f"candidate {exc.kind}: {exc}"
    if exc.kind == "timeout":
        verdict.error += "\n" + session.candidate.log_tail()


def _tail(text: str, limit: int) -> str:
    return text if len(text) <= limit else "…" + text[-limit:]
