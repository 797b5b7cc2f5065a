"""A pool that judges on CUDA has its workers make their CUDA context while they wait."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from cudaopt.judge import JudgeOptions, worker_env
from cudaopt.judge.workers.child import CUDA_AHEAD_ENV, Worker
from cudaopt.judge.workers.pool import JudgePool
from cudaopt.judge.workers.quiet import family
from tests.conftest import worker_env_var

TASK = Path(__file__).parent / "zoo" / "task.py"


def test_only_a_pool_that_judges_on_cuda_tells_its_workers_to_ready_cuda(
        tmp_path: Path) -> None:
    """The candidate's process is told in its environment; a reference process (perhaps
    forked, whose environment /proc does not show) says what readying CUDA cost in its
    start-up parts. Without a GPU there is none to ready, and the worker still serves."""
    options = JudgeOptions(device="cpu", profile=False)
    for device in ("cpu", "cuda"):
        pool = JudgePool(worker_env(options))
        try:
            pool.prestart_for(options, device)
            told = worker_env_var(pool.spares.candidate, CUDA_AHEAD_ENV)
            assert told == (f"{CUDA_AHEAD_ENV}=1".encode() if device == "cuda" else b"")
            reference = pool.new_reference("ref")
            reply = reference.call("load", 120, task=str(TASK), device="cpu", init_seed=1,
                                   state_path=str(tmp_path / f"{device}.pt"))
            assert ("cuda" in reply["parts_s"]) == (device == "cuda"), reply["parts_s"]
            reference.close()
        finally:
            pool.close()


def _holds_the_gpu(worker: Worker) -> bool:
    """Whether a process of the worker's (a sandbox's child included) has the GPU open."""
    for pid in family([worker.proc.pid]):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("/dev/nvidia"):
                    return True
            except OSError:
                continue
    return False


@pytest.mark.gpu
def test_workers_started_ahead_for_cuda_open_the_gpu_before_any_command() -> None:
    """Started ahead, the next candidate's and the next task's processes hold their CUDA
    context before the judge sends them anything: `import torch` alone opens no GPU."""
    options = JudgeOptions(device="cuda")
    pool = JudgePool(worker_env(options), keep_warm=False)
    try:
        pool.prestart_for(options, "cuda")
        waiting = [pool.spares.candidate, *pool.spares.fresh, pool.spares.baseline]
        workers = [w for w in waiting if w is not None]
        deadline = time.monotonic() + 120
        while not all(_holds_the_gpu(w) for w in workers):
            assert all(w.alive for w in workers), [w.log_tail() for w in workers]
            assert time.monotonic() < deadline, [_holds_the_gpu(w) for w in workers]
            time.sleep(0.2)
    finally:
        pool.close()
