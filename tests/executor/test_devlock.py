"""The device lock excludes other processes (a slot process and the episodes' judges on the
same GPU), not only other threads."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cudaopt.executor import SlotSpec
from cudaopt.executor.devlock import device_lock

TRY = """import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
try:
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    print("got it")
except BlockingIOError:
    print("held")
"""


def _other_process(path: Path) -> str:
    return subprocess.run([sys.executable, "-c", TRY, str(path)], capture_output=True,
                          text=True, timeout=60).stdout.strip()


def test_a_held_device_lock_is_held_for_other_processes(tmp_path: Path) -> None:
    lock = device_lock(tmp_path, SlotSpec("cuda:1", "cuda", 1))
    with lock:
        assert lock.path == tmp_path / "locks" / "cuda-1.lock"
        assert _other_process(lock.path) == "held"
    assert _other_process(lock.path) == "got it"
    with lock:  # reusable, like a threading.Lock
        assert _other_process(lock.path) == "held"
