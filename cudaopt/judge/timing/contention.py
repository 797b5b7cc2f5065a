"""Did the timed processes get the CPU they asked for?

Interleaved rounds cancel load that slows every contestant alike; load from other processes
does not: torch's intra-op threads stall behind it while a single-threaded kernel barely
notices, and nothing in the measurements scatters or drifts (on 2 cores kept busy by a
2-thread loop, eager went from 2.6 to 25.6 ms and an honest single-threaded kernel was
judged 1.8x faster, not noisy). So the judge looks at the scheduler itself, over each
timing measurement:

- the time the timed workers' threads spent runnable but waiting for a CPU
  (`/proc/PID/task/*/schedstat`), per second of the measurement;
- the CPU time other processes took on the CPUs the workers may run on (`/proc/stat`
  less the judge's own processes: the judging process and all it started, workers and
  builds included, whose CPU time is the judge's own affair, not contention);
- the run queue (`/proc/loadavg`), reported alongside.

Contention is both: the workers waited, and someone else was running. Either alone is not
(the judge's own processes compete with each other; a busy many-core host keeps other
CPUs busy without delaying anyone). Where schedstat is missing, other processes' CPU alone
decides.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from cudaopt.judge.workers.proctable import Proc, below, processes

WAIT_SHARE = 0.10  # thread-seconds waiting per second of measurement
OTHERS_SHARE = 0.25  # CPUs' worth of other processes' work on the workers' CPUs
_PROC = Path("/proc")
_TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")


@dataclass
class Reading:
    wall_s: float
    waited_s: float | None  # the timed workers' threads, runnable but not running
    busy_s: float  # all CPU time spent on the workers' CPUs
    own: dict[int, float]  # the judge's processes: CPU time, their reaped children's too
    runnable: int  # processes and threads runnable at this moment (loadavg)


class Probe:
    """Readings at the start of a measurement and at its `reasons`."""

    def __init__(self, pids: list[int], root: int | None = None):
        """`pids`: the timed workers, with whatever they run in (an isolated candidate's
        worker is a child of its bubblewrap, which the judge started)."""
        table = processes()
        self.pids = sorted({found for pid in pids for found in _descendants(table, pid)}
                           | set(pids))
        self.root = root or os.getpid()
        self.cpus = _cpus(pids)
        self.start = self._read()

    def _read(self) -> Reading:
        table = processes()
        return Reading(time.monotonic(), _waited_s(self.pids), _busy_s(self.cpus),
                       {pid: table[pid].own_s + table[pid].reaped_s
                        for pid in _descendants(table, self.root)},
                       _runnable())

    def reasons(self) -> list[str]:
        """Why the machine was contended over the measurement; empty when it was not."""
        end = self._read()
        start = self.start
        window_s = end.wall_s - start.wall_s
        if window_s <= 0:
            return []
        own_s = sum(cpu - start.own.get(pid, 0.0) for pid, cpu in end.own.items())
        others = max(0.0, end.busy_s - start.busy_s - own_s) / window_s
        waited = None
        if end.waited_s is not None and start.waited_s is not None:
            waited = (end.waited_s - start.waited_s) / window_s
        if others <= OTHERS_SHARE or (waited is not None and waited <= WAIT_SHARE):
            return []
        found = (f"the machine was contended while timing: other processes used {others:.2f} "
                 f"CPUs' worth of the {len(self.cpus)} CPU(s) the timed workers run on")
        if waited is not None:
            found += (f", and the timed workers' threads waited {waited:.2f} s per second "
                      "for a CPU")
        return [found + f" (run queue {max(start.runnable, end.runnable)})"]


def _cpus(pids: list[int]) -> set[int]:
    found: set[int] = set()
    for pid in pids:
        try:
            found |= os.sched_getaffinity(pid)
        except OSError:
            continue
    return found or set(range(os.cpu_count() or 1))


def _waited_s(pids: list[int]) -> float | None:
    total = 0
    for pid in pids:
        try:
            tasks = list((_PROC / str(pid) / "task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                total += int((task / "schedstat").read_text().split()[1])
            except (OSError, IndexError, ValueError):
                if not (task / "schedstat").exists():
                    return None
    return total / 1e9


def _busy_s(cpus: set[int]) -> float:
    """Non-idle time of `cpus` since boot (user, nice, system, irq, softirq, steal)."""
    total = 0
    for line in (_PROC / "stat").read_text().splitlines():
        name, *fields = line.split()
        if not name.startswith("cpu") or name == "cpu" or int(name[3:]) not in cpus:
            continue
        values = [int(v) for v in fields[:8]]
        total += sum(values) - values[3] - values[4]  # less idle and iowait
    return total * _TICK_S


def _descendants(table: dict[int, Proc], root: int) -> set[int]:
    return set(below(table, [root])) if root in table else set()


def _runnable() -> int:
    try:
        return int((_PROC / "loadavg").read_text().split()[3].split("/")[0])
    except (OSError, IndexError, ValueError):
        return 0
