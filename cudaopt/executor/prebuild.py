"""Builds that run ahead of a job on the executor's CPU pool while the slots time others.

Two kinds: a candidate's `kernels/` (the judge's own ninja build, into the folder the slot
builds in) and JIT extensions a candidate compiles when imported (KernelBench's
`load_inline`), which the judge builds by importing the candidate once with CUDA hidden, in
the same sandbox and with the same build settings as the slot's candidate worker. Either
way the slot's own build finds everything up to date; a failure ahead is re-found, and
reported, there.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from cudaopt.executor.base import SlotSpec
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
    seconds it took (the build's share of a job's time, for reports). `sandbox` is the
    slots' `--sandbox` mode."""

    def __init__(self, root: Path, sandbox: str, env: dict[str, str]):
        self.root, self.sandbox, self.env = root, sandbox, env

    def __call__(self, job: Job) -> tuple[list[str], float]:
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
