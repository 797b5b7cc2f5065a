"""The processes a candidate starts are read while it is timed (workers/beside.py), with real
processes: the worker's own CPU time is its calls', any other process's is load."""

from __future__ import annotations

import subprocess
import sys
import time

from cudaopt.judge.workers.beside import Beside

SPIN = "import time\nend = time.time() + {s}\nwhile time.time() < end:\n    pass\n"
# The launcher stands for the candidate's worker: it runs `body`, then waits to be killed.
LAUNCHER = "import os, subprocess, sys, time\n{body}\nprint('ready', flush=True)\ntime.sleep(60)\n"


def _launch(body: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", LAUNCHER.format(body=body)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def _watched(body: str, seconds: float = 0.6) -> list[str]:
    proc = _launch(body)
    try:
        beside = Beside(proc.pid)
        time.sleep(seconds)
        return beside.reasons()
    finally:
        proc.kill()
        proc.wait()


def test_a_process_the_worker_started_that_spins_while_it_is_timed_is_load() -> None:
    child = f"subprocess.Popen([sys.executable, '-c', {SPIN.format(s=5)!r}])"
    found = _watched(child)
    assert found and found[0].startswith("processes the candidate started used"), found


def test_one_that_spun_and_was_reaped_meanwhile_counts_too() -> None:
    """Its CPU time moves to the worker's reaped children's, which are read."""
    body = (f"import threading\nthreading.Timer(0.1, lambda: subprocess.run([sys.executable, "
            f"'-c', {SPIN.format(s=0.3)!r}])).start()")
    assert _watched(body, 1.5), "a child that spun 0.3 s and was reaped went unseen"


def test_a_waiting_child_and_the_workers_own_work_are_not_load() -> None:
    """A helper that sleeps costs nothing; the worker's own CPU time is its calls'."""
    body = ("subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'])\n"
            "import threading\n"
            f"threading.Thread(target=lambda: exec({SPIN.format(s=1)!r}), daemon=True).start()")
    assert _watched(body) == []


def test_a_worker_that_names_itself_after_the_sandbox_does_not_hide_its_child() -> None:
    """A process may set its own short name; the chain of wrappers follows executables."""
    body = ("import ctypes\nctypes.CDLL(None).prctl(15, b'bwrap', 0, 0, 0)\n"
            f"subprocess.Popen([sys.executable, '-c', {SPIN.format(s=5)!r}])")
    found = _watched(body)
    assert found and found[0].startswith("processes the candidate started used"), found
