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
"""

from cudaopt.judge.api import Progress, check
from cudaopt.judge.building.caches import prewarm_compile, worker_env
from cudaopt.judge.building.inline_build import JIT, build_ahead, jit_builds
from cudaopt.judge.building.kernels import (
    KERNEL_SUFFIXES,
    MODULE_NAME,
    build_kernels,
    default_build_dir,
    find_cuda_home,
)
from cudaopt.judge.building.shared import kernel_store
from cudaopt.judge.checks.signal import outputs_vary
from cudaopt.judge.checks.taskcheck import check_task
from cudaopt.judge.insight.ncu import run as run_ncu
from cudaopt.judge.insight.ncu import unavailable as ncu_unavailable
from cudaopt.judge.serving.client import remote_check
from cudaopt.judge.serving.machine_client import machine_check
from cudaopt.judge.serving.serve import find_server, serve
from cudaopt.judge.serving.server import JudgeServer
from cudaopt.judge.timing import pinning
from cudaopt.judge.verdict.options import JudgeOptions, resolve_device, sandbox_off
from cudaopt.judge.verdict.verdict import EXIT_CODES, Status, Timing, Verdict
from cudaopt.judge.workers.devlock import DeviceLock, gpu_identity, gpu_lock
from cudaopt.judge.workers.pool import JudgePool

__all__ = [
    # judging
    "check", "check_task", "outputs_vary", "JudgeOptions", "Progress", "resolve_device",
    "sandbox_off",
    "JudgePool", "worker_env", "prewarm_compile", "Verdict", "Status", "Timing", "EXIT_CODES",
    # building
    "build_kernels", "default_build_dir", "find_cuda_home", "kernel_store", "KERNEL_SUFFIXES",
    "MODULE_NAME", "JIT", "build_ahead", "jit_builds",
    # sharing a host: GPU locks, CPU pinning
    "DeviceLock", "gpu_identity", "gpu_lock", "pinning",
    # serving, and what lies outside the verdict
    "JudgeServer", "find_server", "serve", "remote_check", "machine_check", "ncu_unavailable",
    "run_ncu",
]
