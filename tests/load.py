"""Other users' load on this host, for tests of how the judge meets it: processes that
burst on the CPUs and sleep at random, started by a launcher that exits at once, so that,
handed to another parent, they are not the test's descendants (the judge counts its own
descendants as its own work, not contention)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys

BURSTS = """
import os, random, sys, time
os.sched_setaffinity(0, {cores})
while True:
    end = time.perf_counter() + random.uniform(0.002, 0.3)
    while time.perf_counter() < end:
        pass
    time.sleep(random.uniform(0.002, 0.3))
"""

LAUNCH = """
import subprocess, sys
procs = [subprocess.Popen([sys.executable, "-c", sys.argv[1]], start_new_session=True,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
         for _ in range(int(sys.argv[2]))]
print(" ".join(str(p.pid) for p in procs))
"""


def start_bursts() -> list[int]:
    """Three bursting processes per CPU this process may run on; their pids."""
    cores = sorted(os.sched_getaffinity(0))
    launched = subprocess.run(
        [sys.executable, "-c", LAUNCH, BURSTS.format(cores=set(cores)), str(3 * len(cores))],
        capture_output=True, text=True, check=True, timeout=60)
    return [int(pid) for pid in launched.stdout.split()]


def stop(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
