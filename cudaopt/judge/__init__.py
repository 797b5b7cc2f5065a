"""The trusted evaluator. It never imports litellm or git, and candidate code only ever runs
in a child process (see `workers.child`).

This module is the one door the rest of cudaopt uses. Behind it the folders follow the
judge's pipeline; each imports only from those listed before it (tests/test_layering.py
holds the same list), bottom to top:

- `verdict/`  the verdict, its reward and the judgement's options: shared by every stage;
- `building/` the candidate's kernels built, its `load_inline` builds done ahead, caches;
- `workers/`  the worker processes and their transport: start, pool, session, GPU turns,
              the tensors they draw and pass between them;
- `checks/`   what a candidate must pass: scan, guard, integrity, streams, signal, trials;
- `timing/`   the protocols and clocks, CPU pinning, noise, the timing phase and its figures;
- `insight/`  Nsight Compute's view of the kernels, on request, outside the verdict;
- `roles/`    the programs inside the worker processes, put together from the stages before;
- `api`       `check`: build, verify and time one candidate, the pipeline in order;
- `serving/`  judgements from a warm pool over a Unix socket.

The door loads what is asked of it, when it is asked (PEP 562): a `cudaopt check` answered
by the warm judge never imports torch (3.6-5.6 s on an H200 host), and neither does a
command that only reads verdicts.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cudaopt.judge.api import check, prepare
    from cudaopt.judge.building.caches import cache_root, prewarm_compile, worker_env
    from cudaopt.judge.building.inline_build import JIT, build_ahead, jit_builds
    from cudaopt.judge.building.kernels import (
        KERNEL_SUFFIXES,
        MODULE_NAME,
        build_kernels,
        default_build_dir,
        find_cuda_home,
    )
    from cudaopt.judge.building.shared import kernel_store
    from cudaopt.judge.building.vec_isa import kept_vec_isa
    from cudaopt.judge.checks.signal import outputs_vary
    from cudaopt.judge.checks.taskcheck import check_task
    from cudaopt.judge.insight.ncu import run as run_ncu
    from cudaopt.judge.insight.ncu import unavailable as ncu_unavailable
    from cudaopt.judge.serving.client import remote_check
    from cudaopt.judge.serving.machine_client import machine_check, machine_lender
    from cudaopt.judge.serving.serve import find_server, serve
    from cudaopt.judge.serving.server import JudgeServer
    from cudaopt.judge.timing import pinning
    from cudaopt.judge.verdict.options import (
        JudgeOptions,
        Progress,
        resolve_device,
        sandbox_off,
    )
    from cudaopt.judge.verdict.verdict import EXIT_CODES, Status, Timing, Verdict
    from cudaopt.judge.workers.devlock import DeviceLock, gpu_identity, gpu_lock
    from cudaopt.judge.workers.pool import JudgePool

#: Each name of the door: (the module that defines it, its name there; "" for the module).
_WHERE: dict[str, tuple[str, str]] = {
    "Progress": ("cudaopt.judge.verdict.options", "Progress"),
    "check": ("cudaopt.judge.api", "check"),
    "prepare": ("cudaopt.judge.api", "prepare"),
    "prewarm_compile": ("cudaopt.judge.building.caches", "prewarm_compile"),
    "kept_vec_isa": ("cudaopt.judge.building.vec_isa", "kept_vec_isa"),
    "worker_env": ("cudaopt.judge.building.caches", "worker_env"),
    "cache_root": ("cudaopt.judge.building.caches", "cache_root"),
    "JIT": ("cudaopt.judge.building.inline_build", "JIT"),
    "build_ahead": ("cudaopt.judge.building.inline_build", "build_ahead"),
    "jit_builds": ("cudaopt.judge.building.inline_build", "jit_builds"),
    "KERNEL_SUFFIXES": ("cudaopt.judge.building.kernels", "KERNEL_SUFFIXES"),
    "MODULE_NAME": ("cudaopt.judge.building.kernels", "MODULE_NAME"),
    "build_kernels": ("cudaopt.judge.building.kernels", "build_kernels"),
    "default_build_dir": ("cudaopt.judge.building.kernels", "default_build_dir"),
    "find_cuda_home": ("cudaopt.judge.building.kernels", "find_cuda_home"),
    "kernel_store": ("cudaopt.judge.building.shared", "kernel_store"),
    "outputs_vary": ("cudaopt.judge.checks.signal", "outputs_vary"),
    "check_task": ("cudaopt.judge.checks.taskcheck", "check_task"),
    "run_ncu": ("cudaopt.judge.insight.ncu", "run"),
    "ncu_unavailable": ("cudaopt.judge.insight.ncu", "unavailable"),
    "remote_check": ("cudaopt.judge.serving.client", "remote_check"),
    "machine_check": ("cudaopt.judge.serving.machine_client", "machine_check"),
    "machine_lender": ("cudaopt.judge.serving.machine_client", "machine_lender"),
    "find_server": ("cudaopt.judge.serving.serve", "find_server"),
    "serve": ("cudaopt.judge.serving.serve", "serve"),
    "JudgeServer": ("cudaopt.judge.serving.server", "JudgeServer"),
    "pinning": ("cudaopt.judge.timing.pinning", ""),  # the module itself
    "JudgeOptions": ("cudaopt.judge.verdict.options", "JudgeOptions"),
    "resolve_device": ("cudaopt.judge.verdict.options", "resolve_device"),
    "sandbox_off": ("cudaopt.judge.verdict.options", "sandbox_off"),
    "EXIT_CODES": ("cudaopt.judge.verdict.verdict", "EXIT_CODES"),
    "Status": ("cudaopt.judge.verdict.verdict", "Status"),
    "Timing": ("cudaopt.judge.verdict.verdict", "Timing"),
    "Verdict": ("cudaopt.judge.verdict.verdict", "Verdict"),
    "DeviceLock": ("cudaopt.judge.workers.devlock", "DeviceLock"),
    "gpu_identity": ("cudaopt.judge.workers.devlock", "gpu_identity"),
    "gpu_lock": ("cudaopt.judge.workers.devlock", "gpu_lock"),
    "JudgePool": ("cudaopt.judge.workers.pool", "JudgePool"),
}

__all__ = [
    # judging
    "check", "prepare", "check_task", "outputs_vary", "JudgeOptions", "Progress", "resolve_device",
    "sandbox_off",
    "JudgePool", "worker_env", "cache_root", "prewarm_compile", "kept_vec_isa", "Verdict",
    "Status", "Timing",
    "EXIT_CODES",
    # building
    "build_kernels", "default_build_dir", "find_cuda_home", "kernel_store", "KERNEL_SUFFIXES",
    "MODULE_NAME", "JIT", "build_ahead", "jit_builds",
    # sharing a host: GPU locks, CPU pinning
    "DeviceLock", "gpu_identity", "gpu_lock", "pinning",
    # serving, and what lies outside the verdict
    "JudgeServer", "find_server", "serve", "remote_check", "machine_check", "machine_lender",
    "ncu_unavailable", "run_ncu",
]


#: Functions whose module imports torch, handed out as a stand-in that loads it on the first
#: call: the agent, bench and the CLI name `check` at import, but a client of a warm judge
#: never calls it.
_ON_CALL = frozenset({"check", "prepare"})


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = _WHERE[name]
    if name in _ON_CALL:
        value: Any = _loaded_on_call(module, attribute)
    else:
        loaded = importlib.import_module(module)
        value = getattr(loaded, attribute) if attribute else loaded
    globals()[name] = value
    return value


def _loaded_on_call(module: str, attribute: str) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), attribute)(*args, **kwargs)

    call.__name__ = call.__qualname__ = attribute
    call.__doc__ = f"`{module}.{attribute}`, imported on its first call."
    return call
