"""One judgement's worker processes and the secret seeds they are driven with."""

from __future__ import annotations

import os
import random
import secrets
import shutil
import tempfile
import time
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from cudaopt.judge.building.extdir import keep_build
from cudaopt.judge.verdict.options import JudgeOptions
from cudaopt.judge.workers.beside import Beside
from cudaopt.judge.workers.child import Worker
from cudaopt.judge.workers.lending import STATE_NAME, Loaded
from cudaopt.judge.workers.pool import JudgePool
from cudaopt.judge.workers.quiet import stopped
from cudaopt.judge.workers.replies import digest_of


def cpu_threads(options: JudgeOptions) -> int:
    """The intra-op thread count every worker runs with on CPU: the baselines and the
    candidate must share it, or oversubscription favours whichever uses fewer."""
    import torch

    return options.threads or min(torch.get_num_threads(), len(os.sched_getaffinity(0)))


class Session:
    """The reference, baseline and candidate workers of one judgement, plus a scratch folder.

    Workers come from a `JudgePool`: a one-off pool for a single `cudaopt check`, a shared
    warm one inside an agent run. The candidate worker is always new.
    """

    def __init__(self, options: JudgeOptions, device: str, task: Path, pool: JudgePool):
        self.options = options
        self.device = device
        self.pool = pool
        self.started_at = time.time()
        # Secret per run; a fixed `options.seed` exists only to make tests repeatable.
        self._rng = (secrets.SystemRandom() if options.seed is None
                     else random.Random(options.seed))
        self.scratch = Path(tempfile.mkdtemp(prefix="judge-", dir=pool.scratch))
        self.state_path = pool.scratch / STATE_NAME
        self.threads = cpu_threads(options) if device == "cpu" else None
        warm_reference, warm_baseline = pool.references(task, device, self.threads)
        self.init_seed = pool.init_seed
        self.reference_info = warm_reference.info if warm_reference else None
        self._reference = warm_reference.worker if warm_reference else None
        self._baseline = warm_baseline
        # Timeouts of the baseline replies still owed, a warm worker's left from before.
        self.baseline_pending: list[float] = list(warm_baseline.owed) if warm_baseline else []
        self._candidate: Worker | None = None
        self.inputs_mutable = False  # the task itself modifies its inputs: so may the candidate
        self.output_leaves: list[dict[str, Any]] = []  # dtype and numel of each output tensor
        self.ipc_refused: str | None = None  # why CUDA outputs fell back to files, if they did
        # each worker's last (live, held, most ever held) GiB
        self.memory_gib: dict[str, list[float]] = {}
        self.candidate_path: Path | None = None  # the model_new.py being judged
        # what the candidate committed to for each kept output (see `digest`), by key
        self.committed: dict[str, str] = {}
        # CUDA: the candidate's own kernels its profiled burst launched (see `launches`)
        self.kernels: set[str] | None = None

    @property
    def reference(self) -> Worker:
        """The process that computes the reference outputs: the pool's warm one, or one
        taken when first asked for (a session that only starts the baselines takes none)."""
        if self._reference is None:  # may trade roles with the baseline: `JudgePool._swap`
            self._reference = self.pool.new_reference(
                "ref", prewarm=self.device == "cuda" and self.pool.keep_warm)
        return self._reference

    @property
    def candidate(self) -> Worker:
        """Always a new process, taken from the pool when first asked for."""
        if self._candidate is None:
            self._candidate = self.pool.candidate()
        return self._candidate

    def watch(self) -> Beside:
        """A watch on the processes the candidate starts, for the measurement starting now."""
        return Beside(self.candidate.proc.pid)

    def candidate_held(self, contestant: str) -> AbstractContextManager:
        """Around `contestant`'s timed calls, when it is a baseline, on a CPU: the
        candidate's process, and every process it started, stopped, so that nothing of the
        candidate's (a thread or a process it left running, whatever it is) runs while they
        are timed and takes their cores. It waits for its next command meanwhile in any
        case. On a GPU its threads stay where they are (see docs/development.md, owed item
        20)."""
        if contestant == "candidate" or self.device != "cpu" or self._candidate is None:
            return nullcontext()
        return stopped([self._candidate.proc.pid])

    def take_workers(self) -> None:
        """A judgement takes its reference and candidate processes first, so that any still
        starting do so while the candidate builds."""
        _ = self.reference, self.candidate

    def baseline_profiled(self) -> None:
        """The baseline process ran torch.profiler: on CUDA, where that slows its launches
        ever after, the pool never times it again (`JudgePool._swap`)."""
        if self._baseline is not None and self.device == "cuda":
            self._baseline.worker.profiled = True

    def boot_waited(self, worker: Worker, parts_s: dict[str, float]) -> dict[str, float]:
        """`parts_s` with `boot_waited`: the seconds of the worker's start-up (`boot`) that
        fell inside this judgement: 0 for a process started ahead and ready before it, all
        of `boot` for one started by it."""
        if "boot" not in parts_s:
            return parts_s
        ready_at = worker.spawned_at + parts_s["boot"]
        return {**parts_s, "boot_waited": max(0.0, ready_at - self.started_at)}

    def start_baseline(self, task: Path) -> None:
        """The process that times eager and torch.compile, started (or found warm) first so
        compiling the baseline overlaps the build and the verification."""
        options = self.options
        if self._baseline is None:
            self._baseline = Loaded(self.pool.new_reference(
                "baseline", compiles=options.compile_baseline and options.profile), {})
            self.baseline.send("load", task=str(task.resolve()), device=self.device,
                               init_seed=self.init_seed, threads=self.threads,
                               state_path=str(self.pool.scratch / "baseline_state.pt"))
            self.baseline_pending.append(options.timeout_s)
        if options.compile_baseline and self._baseline.compiled != options.compile_mode:
            self.baseline.send("compile", mode=options.compile_mode,
                               seeds=[self.seed(), self.seed()])
            self.baseline_pending.append(options.build_timeout_s)
            self._baseline.compiled = options.compile_mode

    @property
    def baseline(self) -> Worker:
        """The worker that times eager and torch.compile. Asked before `start_baseline`, it
        is a fault of the judge's: never quietly the reference worker in its place."""
        if self._baseline is None:
            raise RuntimeError("the baseline worker was asked for before `start_baseline`")
        return self._baseline.worker

    def commit(self, key: str, reply: dict[str, Any], candidate: bool = True) -> None:
        """Remember the digest a candidate's call committed its outputs to, for the output
        kept under `key`; the reference's own copies need no commitment."""
        if candidate:
            self.committed[key] = digest_of(reply)

    def note_kernels(self, reply: dict[str, Any]) -> None:
        """Record the kernel names a profiled CUDA burst's reply lists (hostile input:
        strings only; a reply without the list names none, so hiding it earns nothing)."""
        names = reply.get("kernels")
        self.kernels = (self.kernels or set()) | {
            name[:200] for name in (names if isinstance(names, list) else [])
            if isinstance(name, str)}

    def note_memory(self, worker: str, reply: dict[str, Any]) -> None:
        """A worker's (live, held, most held) GiB; the candidate's figures are whatever its
        code sent, so anything but three finite non-negative numbers is left out. They
        only size an executor's lanes (`device_memory_gib`), never a verdict's figures."""
        found = reply.get("memory_gib")
        if (isinstance(found, list) and len(found) == 3 and all(
                isinstance(x, (int, float)) and not isinstance(x, bool)
                and 0 <= x < float("inf") for x in found)):
            self.memory_gib[worker] = [float(x) for x in found]

    def _held_gib(self, worker: str) -> float:
        """Device memory the worker last held (0 on a CPU): what keeping it costs a lender."""
        return float((self.memory_gib.get(worker) or [0.0, 0.0])[1])

    def device_memory_gib(self) -> float | None:
        """The most device memory this judgement's processes can have held at once: each
        one's peak (the last figure it sent: its allocator's high-water mark never falls),
        summed (None on a CPU)."""
        if not self.memory_gib:
            return None
        return round(sum(peak for _, _, peak in self.memory_gib.values()), 3)

    def memory_note(self) -> str:
        """For progress messages: large tasks run close to the device's memory."""
        if not self.memory_gib:
            return ""
        held = ", ".join(f"{name} {live:.1f}/{held:.1f}/{peak:.1f}"
                         for name, (live, held, peak) in sorted(self.memory_gib.items()))
        return f" (device GiB live/held/peak: {held})"

    def seed(self) -> int:
        return self._rng.randrange(1, 2**62)

    def rand(self) -> float:
        return self._rng.random()

    def rand_shuffle(self, items: list[Any]) -> None:
        self._rng.shuffle(items)

    def outputs_dir(self, name: str) -> Path:
        path = self.scratch / name
        path.mkdir(exist_ok=True)
        return path

    def clear(self, path: Path) -> None:
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir()

    def close(self) -> None:
        """The candidate worker always goes (an isolated one's build is kept for the next
        judgement of the same content); the pool decides which reference workers stay."""
        if self._candidate is not None:
            self._candidate.close()
            if self._candidate.caches and self.candidate_path is not None:
                keep_build(self.candidate_path, self._candidate.caches)
        reference = None
        if self.reference_info is not None and self._reference is not None:
            reference = Loaded(self._reference, self.reference_info,
                               device_gib=self._held_gib("reference"))
        if self._baseline is not None:
            self._baseline.owed = self.baseline_pending
            self._baseline.device_gib = self._held_gib("baseline")
        if self.pool.keep_warm:
            self.pool.keep(reference, self._baseline)
        baseline = [self._baseline.worker] if self._baseline is not None else []
        for worker in [*([self._reference] if self._reference else []), *baseline]:
            if not self.pool.holds(worker):
                worker.close()
        shutil.rmtree(self.scratch, ignore_errors=True)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
