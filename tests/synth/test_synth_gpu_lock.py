"""On a GPU, synth runs each task under the GPU's host-wide lock, the one judges time
under, so a synth beside a bench never lands kernels inside the bench's timed calls; the
wait is not counted against the task's time limit. Checked on any machine: the lock is a
file lock, and the GPU named here is one no judge uses."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

from cudaopt.synth.evaluate import Outcome, Prober

HOLD = ("import sys\nfrom cudaopt.judge import gpu_lock\n"
        "with gpu_lock('GPU-test-synth'):\n    print('in', flush=True)\n    sys.stdin.readline()")


def test_a_cuda_task_waits_for_the_gpu_lock_before_its_time_limit_starts(
        tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-test-synth")  # this process's cuda:0
    task = tmp_path / "task.py"
    task.write_text("import torch\n")  # no Model: rejected at once, wherever it runs
    holder = subprocess.Popen([sys.executable, "-c", HOLD], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    outcome: list[Outcome] = []
    try:
        assert holder.stdout.readline().strip() == "in"
        prober = Prober("cuda", (0.0, 1e9), 120, tmp_path / "scratch")
        waiting = threading.Thread(target=lambda: outcome.append(prober.evaluate(task)))
        waiting.start()
        time.sleep(2.0)
        # the child, and with it its time limit, has not started: its log opens with it
        assert waiting.is_alive() and not task.with_suffix(".log").exists()
    finally:
        holder.communicate("\n", timeout=30)
    waiting.join(120)
    prober.close()
    assert task.with_suffix(".log").exists()  # the task ran once the GPU was free
    assert outcome and outcome[0].status == "runs_eager", outcome


def test_a_cpu_task_takes_no_gpu_lock(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-test-synth")
    task = tmp_path / "task.py"
    task.write_text("import torch\n")
    holder = subprocess.Popen([sys.executable, "-c", HOLD], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "in"
        with Prober("cpu", (0.0, 1e9), 120, tmp_path / "scratch") as prober:
            assert prober.evaluate(task).status == "runs_eager"
    finally:
        holder.communicate("\n", timeout=30)
