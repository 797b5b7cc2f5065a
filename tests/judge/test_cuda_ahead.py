"""A pool that judges on CUDA has its next candidate's process make its CUDA context
while it waits."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from cudaopt.judge import JudgeOptions, worker_env
from cudaopt.judge.workers.child import CUDA_AHEAD_ENV, Worker, WorkerFailure
from cudaopt.judge.workers.pool import JudgePool
from cudaopt.judge.workers.quiet import family
from tests.conftest import worker_env_var

TASK = Path(__file__).parent / "zoo" / "task.py"


def test_only_a_pool_that_judges_on_cuda_tells_its_candidate_process_to_ready_cuda() -> None:
    """Told in its environment; without a GPU there is none to ready, and it still serves.
    Trusted processes are never told (see docs/judge.md)."""
    options = JudgeOptions(device="cpu", profile=False)
    for device in ("cpu", "cuda"):
        pool = JudgePool(worker_env(options))
        try:
            pool.prestart_for(options, device)
            candidate = pool.candidate()
            told = worker_env_var(candidate, CUDA_AHEAD_ENV)
            assert told == (f"{CUDA_AHEAD_ENV}=1".encode() if device == "cuda" else b"")
            with pytest.raises(WorkerFailure) as answered:  # alive and serving
                candidate.call("no such request", 120)
            assert answered.value.kind == "KeyError", answered.value
            candidate.close()
            reference = pool.new_reference("ref")
            reply = reference.call("load", 120, task=str(TASK), device="cpu", init_seed=1,
                                   state_path=str(Path(pool.scratch) / "state.pt"))
            assert "cuda" not in reply["parts_s"], reply["parts_s"]
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
def test_the_next_candidates_process_opens_the_gpu_before_any_command() -> None:
    """Started ahead, the next candidate's process holds its CUDA context before the judge
    sends it anything: `import torch` alone opens no GPU."""
    options = JudgeOptions(device="cuda")
    pool = JudgePool(worker_env(options))
    try:
        pool.prestart_for(options, "cuda")
        spare = pool.spares.candidate
        assert spare is not None
        deadline = time.monotonic() + 120
        while not _holds_the_gpu(spare):
            assert spare.alive, spare.log_tail()
            assert time.monotonic() < deadline, spare.log_tail()
            time.sleep(0.2)
    finally:
        pool.close()
