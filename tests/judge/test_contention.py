"""A contended machine earns no speed reward: load from another process is detected from the
scheduler, and the judge's own processes never count as contention against themselves."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from cudaopt.judge import Status
from cudaopt.judge.timing.contention import Probe

from ..adversarial.harness import judge

SPIN = """
import torch
torch.set_num_threads(2)
a = torch.randn(512, 512)
while True:
    a @ a
"""


@pytest.fixture
def other_process_load() -> Iterator[int]:
    """Another process (not one the judging process started: it is detached, reparented
    away) running a 2-thread busy loop on this machine's cores."""
    launcher = subprocess.run(
        ["setsid", "sh", "-c", f'"{sys.executable}" -c "$0" >/dev/null 2>&1 & echo $!', SPIN],
        capture_output=True, text=True, timeout=30, check=True)
    pid = int(launcher.stdout.strip())
    time.sleep(2.0)  # past its torch import, spinning
    try:
        yield pid
    finally:
        os.kill(pid, signal.SIGKILL)


def _busy_child(seconds: float) -> subprocess.Popen:
    code = SPIN.replace("while True:", f"import time\nend = time.time() + {seconds}\n"
                                       "while time.time() < end:")
    return subprocess.Popen([sys.executable, "-c", code])


def test_another_process_keeping_the_cores_busy_is_detected(other_process_load: int) -> None:
    worker = _busy_child(4.0)
    time.sleep(1.5)  # the worker spins too
    probe = Probe([worker.pid])
    time.sleep(2.0)
    found = probe.reasons()
    worker.wait()
    assert found and found[0].startswith("the machine was contended while timing"), found


def test_the_judges_own_processes_are_not_contention(other_process_load: int) -> None:
    """Workers and builds are the judging process's descendants: their CPU time (even once
    they have exited) is subtracted; the detached loop's is not."""
    worker = _busy_child(2.0)
    probe = Probe([worker.pid])
    assert worker.pid in probe.start.own and other_process_load not in probe.start.own
    worker.wait()
    end = probe._read()
    assert worker.pid not in end.own  # reaped: its CPU time is now in ours, as a child's
    assert end.own[os.getpid()] - probe.start.own[os.getpid()] > 0.5


def test_a_verdict_timed_on_a_contended_machine_is_noisy(other_process_load: int) -> None:
    verdict = judge("honest_empty", profile=True)
    assert verdict.status is Status.OK, verdict.violations or verdict.mismatch
    assert verdict.noisy and verdict.reward <= 1, verdict.warnings
    assert any("the machine was contended while timing" in w for w in verdict.warnings)
