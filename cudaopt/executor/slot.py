"""A slot: one GPU (or one CPU worker) judging one job at a time, its judge workers kept
warm while consecutive jobs share a task. The same `SlotRunner` runs in a local slot process
(`python -m cudaopt.executor`, see `local`) or inside a cluster actor."""

from __future__ import annotations

import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import replace
from multiprocessing.connection import Connection
from pathlib import Path

from cudaopt.executor.base import SlotSpec
from cudaopt.executor.devlock import device_lock
from cudaopt.executor.jobs import Job, JobResult
from cudaopt.judge import (
    JudgeOptions,
    JudgePool,
    gpu_identity,
    machine_lender,
    sandbox_off,
    worker_env,
)

Handler = Callable[["SlotRunner", Job], JobResult]
#: Sent to a slot process in place of a job: let its loaded judge workers go, which hold
#: device memory, and keep the process, whose warm templates fork the next job's workers,
#: and its pool's spares (`LocalExecutor._close_beside`); it answers with the same word.
RELEASE = "release"
#: Sent with a judge job's settings ahead of a lane's first job, while the lane waits for
#: the device: the pool for those settings, its processes started now, so that their
#: imports overlap the wait instead of following it (`LocalExecutor._start`); no answer.
PRESTART = "prestart"
#: Job kinds and what runs them; other packages add theirs (an agent run) via `register`.
HANDLERS: dict[str, Handler] = {}


def register(kind: str, handler: Handler) -> None:
    HANDLERS[kind] = handler


class SlotRunner:
    """Judges jobs in this process. `sandbox` is a `--sandbox` mode: with "auto"/"bwrap" the
    candidate worker runs in the same bubblewrap sandbox as inside `cudaopt optimize`."""

    def __init__(self, spec: SlotSpec, root: Path | None = None, sandbox: str = "none"):
        self.spec = spec
        self.root = Path(root or tempfile.mkdtemp(prefix="cudaopt-slot-"))
        self.root.mkdir(parents=True, exist_ok=True)
        self.sandbox = sandbox
        self._pool: JudgePool | None = None
        self._pool_key: tuple | None = None

    def pool(self, job: Job) -> JudgePool:
        """The warm pool for this job's judge settings (one per slot, rebuilt when they
        change); the pool itself re-keys its reference workers when the task changes."""
        return self._pool_for(job.options)

    def prestart(self, options: JudgeOptions) -> None:
        """The pool for `options`, its next judgement's processes started now (`PRESTART`)."""
        device = options.device or self.spec.device
        self._pool_for(options).prestart_for(replace(options, device=device), device)

    def _pool_for(self, options: JudgeOptions) -> JudgePool:
        key = (options.cache_dir, options.device or self.spec.device)
        if self._pool is None or key != self._pool_key:
            if self._pool is not None:
                self._pool.close()
            # on a GPU the next job's processes start while this one times (see `ahead`);
            # on a CPU their start would compete with the timing for the cores
            self._pool = JudgePool(worker_env(options), wrapper=self._wrapper(),
                                   ahead=self.spec.device == "cuda",
                                   confined=self.sandbox != "none")
            gpu = gpu_identity(0) if self.spec.device == "cuda" else None  # ours is cuda:0
            self._pool.lock = device_lock(self.root, self.spec, gpu)  # shared with other judges
            self._pool.lender = machine_lender()  # a task's pair outlives this run
            self._pool_key = key
        return self._pool

    def _wrapper(self):  # noqa: ANN202 - a JudgePool wrapper or None
        if self.sandbox == "none":
            return None
        from cudaopt.sandbox import resolve_sandbox

        box = resolve_sandbox(self.sandbox)
        workspace = self.root

        def wrap(argv: list[str], env: dict[str, str],
                 writable: list[Path]) -> tuple[list[str], dict[str, str]]:
            return box.wrap_process(argv, env, workspace, writable)

        return wrap

    def run(self, job: Job) -> JobResult:
        """Never raises: a handler's exception is the machine's failure, not the candidate's."""
        started = time.perf_counter()
        try:
            handler = HANDLERS.get(job.kind) or _unknown
            result = handler(self, job)
        except Exception as exc:  # noqa: BLE001 - reported as an infrastructure error
            result = JobResult(job.id, infra_error=f"{type(exc).__name__}: {exc}\n"
                               + traceback.format_exc(limit=4))
        result.slot = result.slot or self.spec.name
        result.wall_s = time.perf_counter() - started
        ended = time.time()
        result.extra["span"] = [ended - result.wall_s, ended]  # epoch s: when the job ran
        return result

    def release(self) -> None:
        """The pool's loaded workers let go, its spares kept (`JudgePool.release`)."""
        if self._pool is not None:
            self._pool.release()

    def close(self) -> None:
        """The judge workers closed; the next job makes a new pool, its trusted workers
        forked from this process's templates, which outlive it."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None


def judge_job(runner: SlotRunner, job: Job) -> JobResult:
    """Judge the job's candidate against its task, exactly as `cudaopt check` would."""
    from cudaopt.judge import check  # imports torch: only where a job is judged

    task, candidate = job.sources.materialize(runner.root)
    if candidate is None:
        raise ValueError("a judge job needs a candidate (model_new)")
    options = replace(job.options, device=job.options.device or runner.spec.device)
    if runner.sandbox == "none":
        options = sandbox_off(options)
    pool = runner.pool(job)
    verdict = check(task, candidate, options, pool=pool)
    # the next job is often another task (a bench): its reference and baseline processes
    # import torch now, while this result travels, instead of on its critical path
    pool.prestart_for(options, verdict.device or options.device or runner.spec.device)
    return JobResult(job.id, verdict=verdict.to_json(), device_name=verdict.device_name,
                     torch_version=verdict.torch_version)


def _unknown(runner: SlotRunner, job: Job) -> JobResult:
    raise ValueError(f"no handler for job kind {job.kind!r} (known: {', '.join(HANDLERS)})")


register("judge", judge_job)


def serve(conn: Connection, runner: SlotRunner) -> None:
    """The slot process's loop: a job in, a result out, until the parent closes the pipe."""
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        if job == RELEASE:
            runner.release()
            conn.send(RELEASE)
            continue
        if isinstance(job, tuple) and job[0] == PRESTART:
            runner.prestart(job[1])
            continue
        conn.send(runner.run(job))


def main(argv: list[str]) -> None:
    fd, name, device, gpu, root, sandbox, *plugins = argv
    # SIGTERM (an executor stopping now) unwinds through `finally`: judge workers are closed
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    from cudaopt.judge import pinning

    pinning.avoid()  # off every slot's timing CPU; the judge pins its timing thread to ours
    for module in plugins:  # packages that register job kinds (e.g. agent runs)
        __import__(module)
    spec = SlotSpec(name, device, None if gpu == "-" else int(gpu))
    runner = SlotRunner(spec, Path(root), sandbox)
    try:
        serve(Connection(int(fd)), runner)
    finally:
        runner.close()

