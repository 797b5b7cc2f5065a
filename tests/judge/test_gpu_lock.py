"""A CUDA judgement holds its GPU's host-wide lock, so other tools judging on that GPU wait:
a GPU never times two things at once, whoever asked."""

from __future__ import annotations

import subprocess
import sys
from contextlib import nullcontext

import pytest

from cudaopt.judge import JudgeOptions, worker_env
from cudaopt.judge.workers.devlock import gpu_lock
from cudaopt.judge.workers.pool import JudgePool
from tests.conftest import lock_from_another_process, worker_env_var


def _pool(**env: str) -> JudgePool:
    return JudgePool({**worker_env(JudgeOptions()), **env}, keep_warm=False)


def test_a_cuda_judgement_locks_the_gpu_its_workers_see_host_wide() -> None:
    pool = _pool(CUDA_VISIBLE_DEVICES="GPU-test-7,3")  # the workers' cuda:0
    try:
        lock = pool.gpu_lock("cuda")
        assert lock.path.name == "gpu-GPU-test-7.lock"
        assert lock.path == gpu_lock("GPU-test-7").path  # what a bench's slot on it takes
        with lock:
            assert lock_from_another_process(lock.path) == "held"
        assert lock_from_another_process(lock.path) == "got it"
    finally:
        pool.close()


def test_cpu_judgements_and_pools_already_holding_the_gpu_lock_take_nothing_more() -> None:
    pool = _pool(CUDA_VISIBLE_DEVICES="GPU-test-8")
    try:
        assert isinstance(pool.gpu_lock("cpu"), nullcontext)
        pool.lock = gpu_lock("GPU-test-8")  # an executor's slot: taking it twice would hang
        assert isinstance(pool.gpu_lock("cuda"), nullcontext)
    finally:
        pool.close()


def test_a_judge_that_must_wait_is_told_who_holds_the_gpu() -> None:
    lock = gpu_lock("GPU-test-9")
    assert lock.waiting_on() is None
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\n"
         "from cudaopt.judge.workers.devlock import gpu_lock\n"
         "with gpu_lock('GPU-test-9'):\n    print('in', flush=True)\n    time.sleep(60)"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "in"
        assert lock.waiting_on().startswith(f"pid {holder.pid}: ")
    finally:
        holder.kill()
        holder.wait()
    assert lock.waiting_on() is None


def test_a_workers_gpu_step_waits_for_the_judgement_timing_on_that_gpu(tmp_path) -> None:
    """A step that runs on the GPU outside its own judgement's turn (a bench preparing the
    next task) waits while another judgement holds the GPU; off the GPU it never waits."""
    from cudaopt.judge.workers.devlock import TURN_ENV

    lock = gpu_lock("GPU-test-10")
    step = ("import time\nfrom cudaopt.judge.workers.devlock import gpu_turn\n"
            "print('ready', flush=True)"
            "\nt = time.monotonic()\nwith gpu_turn(%s):\n    pass\n"
            "print(round(time.monotonic() - t, 1))")
    env = {**__import__("os").environ, TURN_ENV: str(lock.path)}
    with lock:
        off_gpu = subprocess.run([sys.executable, "-c", step % "False"], env=env,
                                 capture_output=True, text=True, timeout=60)
        assert float(off_gpu.stdout.split()[-1]) < 1.0
        on_gpu = subprocess.Popen([sys.executable, "-c", step % "True"], env=env,
                                  stdout=subprocess.PIPE, text=True)
        assert on_gpu.stdout.readline().strip() == "ready"
        __import__("time").sleep(2.0)
        assert on_gpu.poll() is None  # still waiting for the GPU
    assert float(on_gpu.communicate(timeout=60)[0]) >= 2.0


def test_the_pools_reference_workers_are_told_which_gpu_lock_to_take() -> None:
    from cudaopt.judge.workers.devlock import TURN_ENV

    pool = _pool(CUDA_VISIBLE_DEVICES="GPU-test-11")
    try:
        worker = pool.new_reference("ref")
        told = worker_env_var(worker, TURN_ENV)
        assert told == f"{TURN_ENV}={gpu_lock('GPU-test-11').path}".encode()
        worker.close()
    finally:
        pool.close()


def test_the_candidate_never_learns_the_gpu_lock_the_judge_takes_for_it() -> None:
    """A sandboxed candidate cannot open the lock (its /tmp is its own), and one that could
    might hold it to stall every judge on the GPU: the judge holds the turn for its step."""
    from cudaopt.judge.workers.devlock import TURN_ENV

    pool = _pool(CUDA_VISIBLE_DEVICES="GPU-test-12")
    try:
        worker = pool.candidate()
        assert worker_env_var(worker, TURN_ENV) == b""
        worker.close()
        turn = pool.candidate_turn("cuda")
        assert turn.path == gpu_lock("GPU-test-12").path
        with turn:
            assert lock_from_another_process(turn.path) == "held"
        assert isinstance(pool.candidate_turn("cpu"), nullcontext)
    finally:
        pool.close()


@pytest.mark.parametrize("compiling", [True, False])
def test_torch_compile_lets_the_gpu_go_while_it_compiles_only(tmp_path, monkeypatch,
                                                              compiling: bool) -> None:
    """The baseline's compile step holds the GPU around the work it gives the device (input
    draws, the compiled code's runs) but not while torch.compile traces and generates code,
    which can take a minute; a step that may benchmark on the GPU as it compiles
    (`compiling=False`: max-autotune) holds it throughout."""
    import fcntl
    import os

    import torch

    from cudaopt.judge.workers.devlock import TURN_ENV, gpu_turn

    path = tmp_path / "gpu.lock"
    monkeypatch.setenv(TURN_ENV, str(path))

    def free() -> bool:  # another process's view: can it take the GPU now?
        fd = os.open(path, os.O_RDONLY | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False
        finally:
            os.close(fd)

    seen: dict[str, bool] = {}

    def backend(gm, example_inputs):  # runs while torch.compile compiles
        seen["compiling"] = free()
        return gm.forward

    torch._dynamo.reset()
    fn = torch.compile(lambda x: (x * 2).sum(), backend=backend)
    try:
        with gpu_turn(True, compiling=compiling):
            seen["before"] = free()
            fn(torch.ones(4))
            seen["after"] = free()
    finally:
        torch._dynamo.reset()
    assert seen == {"before": False, "compiling": compiling, "after": False}
    assert free()  # and the step's end gives it back
