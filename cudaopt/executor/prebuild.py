"""Builds that run ahead of a job on the executor's CPU pool while the slots time others.

Two kinds: a candidate's `kernels/` (the judge's own ninja build, into the folder the slot
builds in) and JIT extensions a candidate compiles when imported (KernelBench's
`load_inline`), which the judge builds by importing the candidate once with CUDA hidden, in
the same sandbox and with the same build settings as the slot's candidate worker. Either
way the slot's own build finds everything up to date; a failure ahead is re-found, and
reported, there.

Beside a CPU slot a build takes that slot's device lock: the slot times on the cores the
compiler would use, and a build beside its timing rounds made the verdict noisy (on two
cores, an honest kernel in a CPU reward service's batch lost its reward that way). The
lock is held only while the slot verifies and times, so the build still overlaps the slot's
own start-up and build; on GPU slots builds run beside the timing, off its reserved CPU.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

from cudaopt.executor.base import SlotSpec
from cudaopt.executor.devlock import device_lock
from cudaopt.executor.jobs import Job


def arch_env(slots: list[SlotSpec]) -> dict[str, str]:
    """The CUDA architecture JIT builds target, fixed for the slots and the builds ahead
    alike (a build ahead sees no GPU, and torch rebuilds when the flags differ). Empty when
    the user set it, on CPU, and when the slots' GPUs differ (then each slot builds its own)."""
    gpus = [spec.gpu for spec in slots if spec.gpu is not None]
    if not gpus or os.environ.get("TORCH_CUDA_ARCH_LIST"):
        return {}
    import torch

    caps = {torch.cuda.get_device_capability(gpu) for gpu in gpus}
    if len(caps) != 1:
        return {}
    major, minor = caps.pop()
    return {"TORCH_CUDA_ARCH_LIST": f"{major}.{minor}+PTX"}  # what torch picks by itself


def needs_build(job: Job) -> bool:
    from cudaopt.judge import JIT

    sources = job.sources
    return job.kind == "judge" and bool(sources.kernels or JIT.search(sources.model_new or ""))


class Prebuilder:
    """Called on the pool with a job; returns what it built ("kernels", "jit") and the
    seconds it took (the build's share of a job's time, for reports; waiting for the CPU
    slots' locks not counted). `sandbox` is the slots' `--sandbox` mode; `slots` the
    executor's, whose CPU slots' locks each build holds (see the module's docstring)."""

    def __init__(self, root: Path, sandbox: str, env: dict[str, str],
                 slots: Sequence[SlotSpec] = ()):
        self.root, self.sandbox, self.env = root, sandbox, env
        self.cpu_slots = sorted((spec for spec in slots if spec.device == "cpu"),
                                key=lambda spec: spec.name)  # one order: no deadlock

    def __call__(self, job: Job) -> tuple[list[str], float]:
        with ExitStack() as held:
            for spec in self.cpu_slots:  # a new lock object each: builds run in threads
                held.enter_context(device_lock(self.root, spec))
            return self._build(job)

    def _build(self, job: Job) -> tuple[list[str], float]:
        from cudaopt.judge import (
            build_ahead,
            build_kernels,
            default_build_dir,
            jit_builds,
            kernel_store,
            resolve_device,
        )

        started, built = time.perf_counter(), list[str]()
        _, candidate = job.sources.materialize(self.root)
        if candidate is None:
            return built, 0.0
        device = job.options.device or resolve_device(None)
        build_dir = default_build_dir(candidate, device)
        if job.sources.kernels:
            if not build_kernels(candidate.parent / "kernels", build_dir,
                                 job.options.build_timeout_s, kernel_store(job.options)).ok:
                return built, time.perf_counter() - started
            built.append("kernels")
        if jit_builds(candidate) and build_ahead(
                candidate, job.options, build_dir if job.sources.kernels else None,
                self._wrap(), self.env):
            built.append("jit")
        return built, time.perf_counter() - started

    def _wrap(self):  # noqa: ANN202 - an inline_build.Wrap or None
        if self.sandbox == "none":
            return None
        from cudaopt.sandbox import resolve_sandbox

        box, root = resolve_sandbox(self.sandbox), self.root

        def wrap(argv: list[str], env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
            return box.wrap_process(argv, env, root, [])

        return wrap
