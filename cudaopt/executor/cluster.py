"""Slots on a Ray cluster: one actor per GPU (`num_gpus=1`) running the same `SlotRunner` as
a local slot process, kept warm on a task like a local slot; kernel builds run ahead as Ray
CPU tasks. Results come back to this process, the driver, so whoever writes them (bench's
`results.jsonl`) writes alone, and a resume works as locally. A slot whose node dies costs
only its job, which is retried on another slot; a node that cannot judge (no nvcc, no GPU)
is found when its slot starts, reported, and left out."""

from __future__ import annotations

import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from cudaopt.executor.base import SlotSpec
from cudaopt.executor.jobqueue import JobQueue, Pending
from cudaopt.executor.jobs import Job, JobResult
from cudaopt.executor.ray_node import SlotActor, build
from cudaopt.executor.ray_setup import connect, slot_plan


class RayExecutor:
    """`address`: "auto" (RAY_ADDRESS, or the cluster `ray start` made here), "ray://host:10001",
    or "local" (a private single-node Ray). `slots`: how many judge actors (default: one per
    GPU of the cluster; with `device="cpu"`, one per declared GPU, else one per node).
    `plugins` are modules each actor imports to register more job kinds."""

    def __init__(self, address: str | None = "auto", device: str = "cuda",
                 slots: int | None = None, root: Path | str | None = None,
                 sandbox: str = "none", plugins: tuple[str, ...] = (),
                 job_timeout_s: float = 3600.0, max_attempts: int = 3,
                 startup_timeout_s: float = 300.0, slot_cpus: float = 1.0,
                 runtime_env: dict[str, Any] | None = None):
        self.job_timeout_s, self.max_attempts = job_timeout_s, max_attempts
        self.startup_timeout_s = startup_timeout_s
        self._ray, self._own_ray = connect(address, runtime_env)
        try:
            self._setup(device, slots, root, sandbox, plugins, slot_cpus)
            self._start_slots()
        except BaseException:  # a bad setting or a Ctrl-C while slots start: release all
            self.close()
            raise

    def _setup(self, device: str, slots: int | None, root: Path | str | None, sandbox: str,
               plugins: tuple[str, ...], slot_cpus: float) -> None:
        ray = self._ray
        self._queue = JobQueue()
        self._cond = self._queue.cond
        self._threads: list[threading.Thread] = []
        self._actors: dict[int, Any] = {}
        self.device, self.sandbox, self.plugins = device, sandbox, tuple(plugins)
        # One path on every node: a build made by a CPU task lands where a slot looks for it.
        self.root = str(root or Path(tempfile.gettempdir()) / "cudaopt-ray")
        count, options = slot_plan(ray, device, slots, slot_cpus)
        self._actor_cls = ray.remote(SlotActor).options(max_restarts=0, **options)
        self._build = ray.remote(build).options(num_cpus=1, max_retries=1)
        self.nodes: list[dict[str, Any]] = []  # one probe per slot that started
        self.problems: list[str] = []
        self._specs: dict[int, SlotSpec] = {}
        self._starting = self._alive = count

    def _start_slots(self) -> None:
        """One thread per slot places its actor (and later replaces it); wait until each
        has started or given up, so `slots` and `problems` are known before any job."""
        self._threads = [threading.Thread(target=self._serve, args=(i,), daemon=True,
                                          name=f"ray-slot-{i}") for i in range(self._alive)]
        for thread in self._threads:
            thread.start()
        deadline = time.monotonic() + self.startup_timeout_s + 5
        with self._cond:
            while self._starting > 0 and time.monotonic() < deadline:
                self._cond.wait(timeout=0.5)
            usable = bool(self._specs)
        if not usable:
            why = "; ".join(self.problems) or "no slot started"
            raise RuntimeError(f"no slot on the Ray cluster can judge {self.device} jobs: {why}")
        self.problems += mixed(self.nodes)

    @property
    def slots(self) -> list[SlotSpec]:
        with self._cond:
            return [self._specs[i] for i in sorted(self._specs)]

    def describe(self) -> list[str]:
        """One line per slot (node, GPU model, torch, nvcc), then the problems found."""
        lines = [f"{n['slot']}: {n['device_name']} ({n['cpu']}), torch {n['torch']}"
                 + (f", CUDA {n['cuda']}, nvcc {n['nvcc']}" if self.device == "cuda" else "")
                 for n in self.nodes]
        return lines + [f"warning: {p}" for p in self.problems]

    def submit(self, job: Job) -> Future[JobResult]:
        pending = Pending(job, Future())
        if job.kind == "judge" and job.sources.kernels:
            ref = self._build.remote(job, self.root, self.device, self._arch())
            pending.built, pending.ready = [ref], ref.future()
        with self._cond:
            refusal = None if self._alive else self._no_slot_left()
        self._queue.put(pending, refusal)
        return pending.future

    def close(self, wait: bool = True) -> None:
        """Release every actor. Jobs not started resolve as infrastructure errors; running
        ones finish first (`wait=True`), or are stopped now (`wait=False`: a Ctrl-C).
        Finished results were already handed back."""
        with self._cond:
            if self._queue.closed:
                return
        self._queue.drain("executor closed", close=True)
        for thread in self._threads if wait else ():
            thread.join(timeout=self.job_timeout_s)
        with self._cond:
            actors = list(self._actors.values())
        for actor in actors:
            self._ray.kill(actor)
        for thread in self._threads:
            thread.join(timeout=30)
        if self._own_ray:
            self._ray.shutdown()

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, kind: type | None, *exc: object) -> None:
        self.close(wait=kind is None or not issubclass(kind, KeyboardInterrupt))

    def _arch(self) -> str | None:
        archs = {n["capability"] for n in self.nodes}
        return archs.pop() if len(archs) == 1 else None

    def _no_slot_left(self) -> str:
        return "no slot left on the Ray cluster: " + ("; ".join(self.problems) or "all lost")

    def _start(self, index: int) -> tuple[Any, SlotSpec] | None:
        """Place a slot actor and probe its node; None when no node takes it in time, or the
        node it landed on cannot judge (reported in `problems`)."""
        ray = self._ray
        actor = self._actor_cls.remote(self.device, str(index), self.root, self.sandbox,
                                       self.plugins)
        with self._cond:
            self._actors[index] = actor
        ref = actor.describe.remote()
        deadline = time.monotonic() + self.startup_timeout_s
        info = None
        while info is None and not self._queue.closed and time.monotonic() < deadline:
            try:
                info = ray.get(ref, timeout=1.0)
            except ray.exceptions.GetTimeoutError:
                continue
            except ray.exceptions.RayError as exc:
                self.problems.append(f"slot {index} failed to start: {_first_line(exc)}")
                break
        if info is None or info["problems"]:
            if info is None and not self._queue.closed and time.monotonic() >= deadline:
                self.problems.append(f"slot {index}: no node took it within "
                                     f"{self.startup_timeout_s:.0f} s")
            elif info is not None:
                self.problems.append(f"{info['slot']} left out: {'; '.join(info['problems'])}")
            ray.kill(actor)
            return None
        spec = SlotSpec(info["slot"], self.device, 0 if self.device == "cuda" else None)
        with self._cond:
            self.nodes.append(info)
            self._specs[index] = spec
        return actor, spec

    def _serve(self, index: int) -> None:
        started = self._start(index)
        with self._cond:
            self._starting -= 1
            self._cond.notify_all()
        try:
            warm_key = None
            while started is not None and (pending := self._queue.take(warm_key)) is not None:
                actor, spec = started
                pending.attempts += 1
                result, error = self._run(actor, spec, pending)
                warm_key = pending.job.sources.task_key
                if error is not None:
                    self._ray.kill(actor)
                    with self._cond:
                        self._specs.pop(index, None)
                    pending.errors.append(error)
                    if pending.attempts < self.max_attempts:
                        self._queue.requeue(pending)
                    else:
                        pending.finish(JobResult(pending.job.id, infra_error=error,
                                                 slot=spec.name))
                    started, warm_key = (None if self._queue.closed else self._start(index)), None
                    continue
                assert result is not None  # `_run` gives a result or an error
                pending.finish(result)
        finally:
            self._slot_gone(index)

    def _run(self, actor: Any, spec: SlotSpec,
             pending: Pending) -> tuple[JobResult | None, str | None]:
        ray = self._ray
        ref = actor.run.remote(pending.job, pending.built)
        try:
            return ray.get(ref, timeout=self.job_timeout_s), None
        except ray.exceptions.GetTimeoutError:
            return None, (f"slot {spec.name} gave no answer within {self.job_timeout_s:.0f} s "
                          "(killed)")
        except ray.exceptions.RayError as exc:
            return None, f"slot {spec.name} lost: {_first_line(exc)}"

    def _slot_gone(self, index: int) -> None:
        """The last slot gone fails what is left, rather than leaving it waiting forever."""
        with self._cond:
            self._specs.pop(index, None)
            actor = self._actors.pop(index, None)
            self._alive -= 1
            last = self._alive == 0
        if actor is not None:  # an idle slot closes its judge workers; a stuck one is killed
            self._ray.wait([actor.close.remote()], timeout=5)
            self._ray.kill(actor)
        if last:
            self._queue.drain(self._no_slot_left())


def mixed(nodes: list[dict[str, Any]]) -> list[str]:
    """Mixed GPU models or torch versions are allowed, never silent."""
    found = []
    for key, what in (("device_name", "device models"), ("torch", "torch versions")):
        seen = Counter(node[key] for node in nodes)
        if len(seen) > 1:
            parts = ", ".join(f"{k} ({v} slots)" for k, v in seen.items())
            found.append(f"mixed {what}: {parts}; each result names its own")
    return found


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"
