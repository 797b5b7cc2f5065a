"""Slots on this machine: one process per GPU, pinned with CUDA_VISIBLE_DEVICES (or N CPU
workers), fed from one queue. Kernel builds run ahead on a CPU pool while the slots time
other jobs; a slot prefers the next job of the task it already holds warm. A slot process
that dies or hangs fails only its job (as an infrastructure error) and is started anew."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from cudaopt.executor.base import SlotSpec, slot_specs
from cudaopt.executor.estimate import Estimator
from cudaopt.executor.footprints import Footprints, default_path
from cudaopt.executor.jobqueue import JobQueue, Pending
from cudaopt.executor.jobs import Job, JobResult
from cudaopt.executor.lanes import (
    RETRIED_ALONE,
    LaneGate,
    default_lookahead,
    device_bytes_of,
    out_of_device_memory,
)
from cudaopt.executor.prebuild import Prebuilder, arch_env, needs_build
from cudaopt.executor.slotproc import SlotProcess


class LocalExecutor:
    """`device="cuda"`: one slot per GPU in `gpus` (default: every visible GPU).
    `device="cpu"`: `workers` CPU slots (default 1: timings on a shared CPU interfere).
    `plugins` are modules the slot processes import to register more job kinds.

    `lookahead` (default: `default_lookahead`) is how many jobs each slot prepares while it
    times another: a slot runs `1 + lookahead` lanes, each a slot process with its own judge
    workers, sharing the slot's device lock, which a judgement holds only to verify and time
    (see `judge.api`). So the next tasks' workers start, their models are built, their
    baselines compiled and their candidates imported while the GPU times the current one;
    the bound caps the memory that prepared tasks hold (KernelBench inputs are gigabytes).
    On a CPU, preparing competes for the cores the timing uses, hence no look-ahead by
    default.

    The lanes of a slot start jobs only while what those jobs hold fits in `device_bytes`
    (default: each GPU's memory; on CPU slots unbounded unless given): each task's footprint
    is learnt from its verdicts and kept in `footprints` (default: the user's cache on GPU
    slots; in memory only on CPU slots), a task never judged here counts as an equal share
    of the device (see `footprints`)."""

    def __init__(self, device: str, gpus: list[int] | None = None, workers: int = 1,
                 root: Path | None = None, sandbox: str = "none",
                 plugins: tuple[str, ...] = (), build_workers: int | None = None,
                 job_timeout_s: float = 3600.0, max_attempts: int = 2,
                 lookahead: int | None = None, device_bytes: int | None = None,
                 footprints: Path | None = None):
        self.root = Path(root or tempfile.mkdtemp(prefix="cudaopt-exec-"))
        self._own_root = root is None
        self.sandbox, self.plugins = sandbox, plugins
        self.job_timeout_s, self.max_attempts = job_timeout_s, max_attempts
        self._slots = slot_specs(device, gpus, workers)
        self._timing_cpus = _reserve(self._slots)
        self._queue = JobQueue()
        self._cond = self._queue.cond
        self._running: dict[str, SlotProcess] = {}  # slot lane -> its process, while it works
        self._lanes: dict[str, SlotProcess] = {}  # slot lane -> its last process
        self._footprints = Footprints(footprints or (default_path() if device == "cuda"
                                                      else None))
        self._build_env = arch_env(self._slots)
        self._prebuild = Prebuilder(self.root, sandbox, self._build_env, self._slots)
        reserved = set(self._timing_cpus.values())
        self._builds = ThreadPoolExecutor(
            build_workers or max(1, (os.cpu_count() or 2) - 1 - len(reserved)),
            initializer=_avoid, initargs=(reserved,))
        self.lookahead = (default_lookahead(device, len(self._slots)) if lookahead is None
                          else lookahead)
        self._capacity = ({spec.name: device_bytes or device_bytes_of(spec)
                           for spec in self._slots}
                          if self.lookahead and (device_bytes or device == "cuda") else {})
        self._gate = LaneGate(self._cond, self._capacity)
        self._estimates = Estimator(reserved) if self._capacity else None
        self._threads = [threading.Thread(target=self._serve, args=(spec, lane), daemon=True,
                                          name=f"slot-{spec.name}#{lane}")
                         for spec in self._slots for lane in range(1 + self.lookahead)]
        for thread in self._threads:
            thread.start()

    @property
    def slots(self) -> list[SlotSpec]:
        return list(self._slots)

    def submit(self, job: Job) -> Future[JobResult]:
        pending = Pending(job, Future())
        if self._estimates and self._footprints.need(job.sources.task_key) is None:
            self._estimates.ahead(job.sources)
        if needs_build(job):
            pending.ready = self._builds.submit(self._prebuild, job)
        self._queue.put(pending)
        return pending.future

    def close(self, wait: bool = True) -> None:
        """`wait=False` (an interrupted bench) also stops the jobs running now: their slot
        processes are terminated and the jobs resolve with an infrastructure error."""
        with self._cond:
            running = [] if wait else list(self._running.values())
        self._queue.drain("executor closed", close=True)
        for proc in running:
            proc.terminate()
        for thread in self._threads:
            thread.join(timeout=60)
        self._builds.shutdown(wait=False, cancel_futures=True)
        if self._estimates:
            self._estimates.close()
        if self._timing_cpus:
            from cudaopt.judge import pinning

            for cpu in self._timing_cpus.values():
                pinning.release(cpu)
        if self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> LocalExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _serve(self, spec: SlotSpec, lane: int) -> None:
        proc: SlotProcess | None = None
        warm_key, name = None, f"{spec.name}#{lane}"
        try:
            while (pending := self._queue.take(warm_key)) is not None:
                pending.attempts += 1
                need = self._need(spec, pending)
                if proc is None or not proc.alive:
                    proc = self._start(spec, pending.job)
                with self._gate.enter(spec.name, pending.alone, need):
                    if pending.alone:
                        self._close_beside(spec.name, name)
                    with self._cond:
                        self._running[name] = self._lanes[name] = proc
                    result = proc.run(pending.job, self.job_timeout_s)
                    with self._cond:
                        self._running.pop(name, None)
                warm_key = pending.job.sources.task_key
                self._footprints.learn(warm_key, result)
                if self.lookahead and not pending.alone and out_of_device_memory(result):
                    proc.release()  # its workers may still hold what they allocated
                    warm_key, pending.alone = None, True
                    pending.errors.append(RETRIED_ALONE)
                    self._queue.requeue(pending)
                    continue
                if result.infra_error is not None:
                    proc.close()
                    proc, warm_key = None, None
                    pending.errors.append(result.infra_error)
                    if pending.attempts < self.max_attempts:
                        self._queue.requeue(pending)
                        continue
                if pending.ready is not None and pending.ready.exception() is None:
                    built, result.extra["build_ahead_s"] = pending.ready.result()
                    result.extra["built_ahead"] = built
                pending.finish(result)
        finally:
            if proc is not None:
                proc.close()

    def _start(self, spec: SlotSpec, job: Job) -> SlotProcess:
        """A lane's process, started before the lane waits for its turn on the device. On a
        GPU, for a judge job, it starts that job's judge processes at once (`PRESTART`):
        the lanes of a cold bench whose first tasks are judged alone one after another (the
        6 GiB-input activations of KernelBench) each booted theirs only when their turn
        came, 10-16 s of `load` apiece on the critical path (an H100 80GB, 2026-12-07)."""
        proc = SlotProcess(spec, self.root, self.sandbox, self.plugins, self._timing_cpus,
                            self._build_env)
        if spec.device == "cuda" and job.kind == "judge":
            proc.prestart(job.options)
        return proc

    def _need(self, spec: SlotSpec, pending: Pending) -> int:
        """The device bytes the job's lane counts on holding: its task's footprint, or for a
        task never judged here an equal share of the slot's memory, or the guess built on
        the meta device (`estimate`) where that is more. A task that needs more than half
        of it is judged alone from its first try, the other lanes' judge workers closed:
        idle, they hold memory no footprint counts, and beside them the 6 GiB-input
        activations of KernelBench (footprints of 72.5-72.8 GiB on an 80 GiB H100,
        2026-12-05) ran out of memory and were judged again alone."""
        capacity = self._capacity.get(spec.name)
        if capacity is None:
            return 0
        known = self._footprints.need(pending.job.sources.task_key)
        if known is None:
            guessed = self._estimates.bytes_for(pending.job.sources) if self._estimates else None
            known = max(capacity // (1 + self.lookahead), guessed or 0)
        pending.alone = pending.alone or known > capacity // 2
        return known

    def _close_beside(self, slot: str, lane: str) -> None:
        """Let go the loaded judge workers of `slot`'s other lanes, idle while this one works
        alone: they keep the last task's model, and a baseline or reference whose judgement
        ended early keeps its inputs too (two such held 18.8 GiB each when KernelBench's
        20_LeakyReLU was judged again alone on an 80 GiB H100). The lanes' processes stay,
        with their templates and spare workers, which hold no task's memory: closing them
        too made each lane's next job start a Python that imported torch and torch.compile
        again, 8.5-11.3 s on the critical path of every job after one judged alone, and a
        new candidate process, 5.4-6.5 s (a cold 16-task KernelBench bench on an H100 80GB,
        2026-12-07)."""
        with self._cond:
            idle = [proc for name, proc in self._lanes.items()
                    if name != lane and proc.spec.name == slot]
        for proc in idle:
            proc.release()


def _reserve(slots: list[SlotSpec]) -> dict[str, int]:
    """GPU slots: a CPU each to time from, held for the executor's life; every other process
    it starts stays off them (see `judge.timing.pinning`). None on CPU slots, which time with all
    their threads."""
    gpus = {spec.name: spec.gpu for spec in slots if spec.gpu is not None}
    if not gpus:
        return {}
    from cudaopt.judge import pinning

    cpus = pinning.reserve(list(gpus.values()))  # fewer on a small host: the rest
    return dict(zip(gpus, cpus, strict=False))  # claim per call


def _avoid(reserved: set[int]) -> None:
    from cudaopt.judge import pinning

    pinning.avoid(reserved)
