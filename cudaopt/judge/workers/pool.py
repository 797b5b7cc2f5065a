"""Warm workers kept between judgements of one task: the agent loop's inner loop.

A cold judgement pays for three Python processes importing torch, CUDA initialising in
each, the task's model being built twice and torch.compile tracing the baseline. Only the
candidate process has to be new for every candidate (it imports candidate code); the two
reference processes never do, so they can serve every judgement of the same task. The pool
keeps them loaded (the baseline compiled) and starts the next candidate process ahead of
need, so a warm judgement costs the build, the candidate's import and the measurements.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import shutil
import tempfile
import threading
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from cudaopt.judge.verdict.options import JudgeOptions
from cudaopt.judge.workers import template
from cudaopt.judge.workers.child import CUDA_AHEAD_ENV, PREWARM_ENV, Worker, WorkerFailure
from cudaopt.judge.workers.devlock import TURN_ENV, DeviceLock, gpu_identity, gpu_lock
from cudaopt.judge.workers.isolation import SANDBOXED, Isolation, Wrapper, candidate_worker
from cudaopt.judge.workers.lending import (
    STATE_NAME,
    Lease,
    Lender,
    Loaded,
    borrow,
    lease_key,
    untouched,
)
from cudaopt.judge.workers.quiet import kept_off, stopped
from cudaopt.judge.workers.scratch import scratch_root
from cudaopt.judge.workers.spares import Spares

#: One-off pools made in this process so far (see `JudgePool.forks`)
_ONE_OFF_POOLS = itertools.count()

#: How long a trusted process may take to say what device memory it holds as it is lent
MEASURE_S = 60.0


class JudgePool:
    """`keep_warm=False` is the one-off pool of a single `cudaopt check`: nothing is started
    ahead of need and everything is closed after the judgement.

    `ahead` is for a pool whose next judgement is usually another task's (a bench's or a
    reward service's GPU slot): a reference or baseline process taken from those started
    ahead is replaced at once, so the next task's processes import torch and torch.compile
    (10-16 s on an H200 host) while this judgement verifies and times, instead of after it.
    An agent's pool judges one task many times and keeps its processes loaded instead."""

    def __init__(self, env: dict[str, str], keep_warm: bool = True,
                 wrapper: Wrapper | None = None, ahead: bool = False, isolate: bool = True,
                 confined: bool = False):
        """`confined`: `wrapper` already puts the candidate in namespaces of its own (a
        run's sandbox); else, with `isolate`, the pool does (see `isolation`)."""
        self.env = env
        self.keep_warm = keep_warm
        # trusted workers forked from a warm template (`workers.template`): a long-lived
        # pool's, and a one-off pool's where this process judged before (a script or a test
        # runner calling `check` in a loop). A process's first one-off judgement would not
        # live to use a template; the ones after it paid each worker's imports again.
        self.forks = keep_warm or next(_ONE_OFF_POOLS) > 0
        self.wrapper = wrapper
        self.ahead = ahead
        self.isolate = isolate and not confined
        self._isolation: Isolation | None = SANDBOXED if confined else None
        self.scratch = Path(tempfile.mkdtemp(prefix="cudaopt-pool-", dir=scratch_root()))
        self.init_seed = int.from_bytes(os.urandom(7), "little")
        # the device: timings must not overlap (others share it: an executor's slot lock)
        self.lock: AbstractContextManager[Any] = threading.Lock()  # or a DeviceLock
        self.busy = threading.Lock()  # one judgement at a time on this pool's workers
        self._gpu_lock: DeviceLock | None = None
        self._key: tuple[str, str] | None = None  # (task content digest, device)
        self._reference: Loaded | None = None
        self._baseline: Loaded | None = None
        self.spares = Spares(self._new_candidate, self._new_reference, keep_warm, ahead)
        self._count = 0
        # the baselines' per-kernel breakdowns for the task held (contestant -> breakdown):
        # taken once, by a process never timed again (see `_swap`)
        self.breakdowns: dict[str, dict[str, Any]] = {}
        # the machine's warm judge: takes the loaded pair this pool lets go and lends it
        # to the next pool of the same task, in this process or another (see `lending`)
        self.lender: Lender | None = None
        self._lease_key: str | None = None
        self.share_cuda = True  # CUDA outputs pass by IPC handle until that fails once
        self.device: str | None = None  # where its judgements run, once known

    def _log(self, name: str) -> Path:
        self._count += 1
        return self.scratch / f"{name}-{self._count}.log"

    def gpu_lock(self, device: str) -> AbstractContextManager:
        """For a CUDA judgement, the GPU's host-wide lock, so that another tool judging on
        this GPU (a bench, a reward service, another run) waits for this one; nothing when
        `lock` already is that lock (an executor's slot, runs sharing a device)."""
        if device != "cuda" or getattr(self.lock, "host_wide", False):
            return nullcontext()
        return self._host_gpu_lock()

    def _host_gpu_lock(self) -> DeviceLock:
        if self._gpu_lock is None:  # the workers' cuda:0, as the host names it
            self._gpu_lock = gpu_lock(gpu_identity(0, {**os.environ, **self.env}))
        return self._gpu_lock

    def candidate(self) -> Worker:
        """The spare candidate worker (already past `import torch`); the next one starts now."""
        return self.spares.take_candidate()

    def quiet(self, device: str, timing_cpu: int | None) -> AbstractContextManager:
        """Around a judgement's timing, the processes this pool started ahead, and this
        process's templates still importing (a warm pool's first judgement starts one): on a
        CPU stopped, since there they would take cores from the timed calls; on a GPU kept
        off the timing thread's CPU, `timing_cpu` (see `quiet`)."""
        pids = self.spares.pids() + template.starting_pids()
        if device == "cpu":
            return stopped(pids)
        return kept_off(pids, {timing_cpu}) if timing_cpu is not None else nullcontext()

    def _turn_lock(self) -> DeviceLock:
        """The GPU's host-wide lock, which GPU steps outside the judgement's turn take."""
        lock = self.lock
        return lock if isinstance(lock, DeviceLock) and lock.host_wide else self._host_gpu_lock()

    def _turn_env(self) -> dict[str, str]:
        """The reference workers take the GPU's lock themselves for such steps."""
        return {**self.env, TURN_ENV: str(self._turn_lock().path)}

    def candidate_turn(self, device: str) -> AbstractContextManager:
        """Held by the judge around the candidate's GPU step outside the judgement's turn
        (its model built and given weights): the candidate itself never learns the lock's
        path, which its sandbox hides and which it could otherwise hold to stall every
        judge on the GPU."""
        return self._turn_lock() if device == "cuda" else nullcontext()

    @property
    def isolation(self) -> Isolation:
        """How this pool's candidate workers are confined (probed once)."""
        if self._isolation is None:
            self._isolation = Isolation.probe() if self.isolate else Isolation(
                False, "none: turned off (--isolation off)")
        return self._isolation

    def _new_candidate(self) -> Worker:
        """No GPU turn in its environment: see `candidate_turn`. In a pool that judges on
        CUDA it makes its CUDA context as it starts (see `ready_cuda`): made later, that
        lies on every judgement's path, in `load.candidate.import_wait`."""
        env = {**self.env, CUDA_AHEAD_ENV: "1"} if self.device == "cuda" else self.env
        return candidate_worker(self._log("candidate"), env, self.scratch, self.wrapper,
                                self.isolate and self.isolation.isolated)

    def task_copy(self, task: Path) -> Path:
        """The task as the candidate worker reads it: a fresh copy in the scratch folder, so a
        confined candidate needs no view of the user's project, and cannot change the file
        the reference workers load."""
        folder = self.scratch / "task"
        folder.mkdir(exist_ok=True)
        copy = folder / task.name
        shutil.copyfile(task, copy)
        return copy

    def references(self, task: Path, device: str,
                   threads: int | None = None) -> tuple[Loaded | None, Loaded | None]:
        """The warm reference and baseline workers for `task`'s content as it is on disk now,
        if any: the same task under another path (a run's workspace copy, a bench's job
        folder) finds them too, and so does another pool of the lender's."""
        digest = hashlib.sha256(task.read_bytes()).hexdigest()
        self.device = device
        self._drop_touched()
        if (digest, device) != self._key:
            self._drop()
            self._key = (digest, device)
            self._lease_key = lease_key(self.env, digest, device, threads)
            self._borrow(self._lease_key)
        return self._reference, self._baseline

    def _drop_touched(self) -> None:
        """A held process that died or was rescheduled while it waited is not used again."""
        if self._reference is not None and not untouched(self._reference.worker):
            self._reference.worker.discard()
            self._reference = None
        if self._baseline is not None and not untouched(self._baseline.worker):
            self._baseline.worker.discard()
            self._baseline = None

    def _borrow(self, key: str) -> None:
        """The lender's pair for this task, its weights copied where this pool's candidates
        read them."""
        lease = borrow(self.lender, key, self.scratch) if self.keep_warm else None
        if lease is None:
            return
        self._reference, self._baseline = lease.reference, lease.baseline
        self.init_seed, self.breakdowns = lease.init_seed, lease.breakdowns

    def _lease(self) -> Lease | None:
        """The pair held, as a lease the lender can keep: loaded, sound, weights known and,
        on a GPU, its memory read as it is given (`Lease.measure`)."""
        if (self.lender is None or self._reference is None or self._lease_key is None
                or not self.keep_warm):
            return None
        on_gpu = self._key is not None and self._key[1].startswith("cuda")
        baseline = self._baseline
        if on_gpu and baseline is not None and baseline.owed:
            baseline = None  # a load or compile in flight: what it will hold is not known
        lease = Lease(self._lease_key, self._reference, baseline, self.init_seed,
                      self.scratch / STATE_NAME, self.breakdowns)
        return lease if lease.sound() and (not on_gpu or lease.measure(MEASURE_S)) else None

    def reseed(self) -> None:
        """New weights for the next judgement (a final check): the warm reference and
        baseline processes load the task again under a new `init_seed` and compile the new
        model (torch.compile's caches make that a fraction of a second), instead of being
        replaced by processes that would import torch and torch.compile again. They never
        imported candidate code, so nothing of an earlier candidate survives in them."""
        recycled = [loaded for loaded in (self._reference, self._baseline)
                    if loaded is not None and loaded.worker.alive
                    and loaded.worker.pending == len(loaded.owed)]
        for loaded in list(recycled):
            try:
                for timeout_s in loaded.owed:  # replies still owed: read them before reuse
                    loaded.worker.receive(timeout_s)
            except WorkerFailure:
                recycled.remove(loaded)
        baseline = self._baseline if self._baseline in recycled else None
        self.spares.adopt([loaded.worker for loaded in recycled if loaded is not baseline],
                          baseline.worker if baseline is not None else None)
        for held in (self._reference, self._baseline):
            if held is not None and not self.spares.holds(held.worker):
                held.worker.close()
        self._reference = self._baseline = None
        self.init_seed = int.from_bytes(os.urandom(7), "little")

    def keep(self, reference: Loaded | None, baseline: Loaded | None) -> None:
        """Take back reference workers after a judgement: only alive ones, only if every
        reply they owe is accounted for (or their next exchange would read a stale reply),
        and only as the judge schedules them (see `scheduling`)."""
        reference = (reference if reference and untouched(reference.worker)
                     and reference.worker.pending == 0 else None)
        baseline = (baseline if baseline and untouched(baseline.worker)
                    and baseline.worker.pending == len(baseline.owed) else None)
        if baseline is not None and baseline.worker.profiled:
            reference, baseline = self._swap(reference, baseline)
        self._reference, self._baseline = reference, baseline

    def _swap(self, reference: Loaded | None,
              profiled: Loaded) -> tuple[Loaded | None, Loaded | None]:
        """A profiled baseline process is never timed again. Both processes loaded the task
        with the same weights, so they trade roles: the profiled one computes the next
        judgement's reference outputs (never timed), the reference process compiles and
        times the baselines (torch.compile's cache makes that about a second). Where there
        is no reference to trade with, or a reply is still owed, it goes, and its successor
        starts now. Each process keeps the figure of the device memory it last held: a
        lender bounds what it keeps by that figure."""
        if reference is not None and not profiled.owed:
            return (Loaded(profiled.worker, reference.info, device_gib=profiled.device_gib),
                    Loaded(reference.worker, {}, device_gib=reference.device_gib))
        self.spares.ensure_baseline()
        return reference, None

    def holds(self, worker: Worker) -> bool:
        return any(loaded is not None and loaded.worker is worker
                   for loaded in (self._reference, self._baseline))

    def _drop(self) -> None:
        """Let the held pair go: to the lender, which owns it from now on, or closed."""
        lease = self._lease()
        if lease is not None and self.lender is not None:
            self.lender.give(lease)
        for loaded in (self._reference, self._baseline):
            if loaded is not None and not (lease and any(loaded is held for held in lease.loaded)):
                loaded.worker.close()
        self._reference = self._baseline = None
        self.breakdowns = {}
        self.init_seed = int.from_bytes(os.urandom(7), "little")

    def prestart(self, references: int, prewarm: bool = False) -> None:
        """Start a candidate and `references` reference processes now (see `Spares.start`),
        so that their imports overlap the caller's own start (its torch import, the device
        check, the kernel build, the previous task's timing) instead of following it."""
        self.spares.start(references, prewarm)

    def prestart_for(self, options: JudgeOptions, device: str) -> None:
        """What a judgement with `options` on `device` will ask for. The prewarm is for CUDA
        only: on a CPU its own compile competes with the judge for the cores."""
        self.device = device
        self.prestart(2 if options.profile else 1,
                      prewarm=options.profile and options.compile_baseline and device == "cuda")

    def new_reference(self, name: str, prewarm: bool = False, compiles: bool = True) -> Worker:
        """A reference process; "baseline" asks for one that times the baselines and, with
        `compiles`, compiles one (a new process then imports torch.compile's machinery as it
        starts: 5.7 s of a CPU judgement's wait where nothing compiled), `prewarm` for
        one that may (a warm pool's on CUDA: see `_swap`). One started ahead if there is
        one (and, with `ahead`, its replacement starts now)."""
        return self.spares.take_reference(name, prewarm, compiles)

    def _new_reference(self, name: str, prewarm: bool = False) -> Worker:
        env = self._turn_env()
        if prewarm:
            env[PREWARM_ENV] = "compile"
        return Worker("reference", self._log(name), env, fork=self.forks)

    def release(self) -> None:
        """The loaded pair let go, as at `close`, and the processes started ahead kept: a
        judgement that needs the device to itself asks this of the pools beside it. What
        they hold is a task's model and inputs; a spare candidate holds only its CUDA
        context, a spare reference no device memory, and closing them put a candidate's
        start (5.4-6.5 s on an H100, sandboxed) on the path of each pool's next judgement."""
        self._drop()
        self._key = None  # the next judgement borrows its task's pair again, if lent

    def close(self) -> None:
        self._drop()
        self.spares.close()
        shutil.rmtree(self.scratch, ignore_errors=True)
