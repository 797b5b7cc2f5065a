"""Timing CPUs: claimed host-wide so judges side by side never time from one CPU, and kept
free of an executor's other processes."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from cudaopt.judge import pinning


def _other_process(code: str, env: dict[str, str] | None = None) -> str:
    """Runs `code` in a fresh interpreter (another judge on the host) and returns its output."""
    prelude = "from cudaopt.judge import pinning; import os\n"
    done = subprocess.run([sys.executable, "-c", prelude + code], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_claimed_cpu_is_refused_to_other_processes_until_released() -> None:
    cpu = max(os.sched_getaffinity(0))
    assert pinning.claim(cpu)
    try:
        assert _other_process(f"print(pinning.claim({cpu}))") == "False"
    finally:
        pinning.release(cpu)
    assert _other_process(f"print(pinning.claim({cpu}))") == "True"


def test_a_claim_dies_with_its_process() -> None:
    cpu = max(os.sched_getaffinity(0))
    _other_process(f"assert pinning.claim({cpu}); os._exit(0)")
    assert pinning.claim(cpu)
    pinning.release(cpu)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to reserve one")
def test_an_executors_processes_stay_off_the_reserved_cpus() -> None:
    reserved = max(os.sched_getaffinity(0))
    code = ("import subprocess, sys\npinning.avoid()\n"
            "print(subprocess.run([sys.executable, '-c', 'import os; "
            "print(sorted(os.sched_getaffinity(0)))'], capture_output=True, text=True).stdout)")
    child = _other_process(code, {pinning.RESERVED_ENV: str(reserved)})
    assert str(reserved) not in child.strip("[]").split(", ")
    assert child != "[]"
