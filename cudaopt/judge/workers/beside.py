"""What processes the candidate started did while it was timed.

The contention probe counts every process the judge started as the judge's own, whatever
the candidate's worker starts included, so that a candidate cannot buy an excuse for a
forged clock with load of its own making. But load of its own making is still load:
processes it forks take cores from the baselines' calls on a CPU (and from their launches
on a GPU host), and a slower baseline is a faster-looking candidate. Spinning only while
its own calls are not running, that load lands on the baselines alone, in every round, and
scatters nothing that `noise` could see.

An honest candidate has no process running while it is timed: a build, a compile or a JIT's
helper has finished before (and one that waits costs no CPU). So the judge reads the CPU time
of every process below the candidate's launcher, the sandbox's own processes and the worker
aside, at the start and at the end of each measurement; any sustained CPU time marks the
measurement unreliable (`reasons`), which withholds the speed reward, and excuses no
disagreement of the clocks (`crosscheck.settle` reads contention from others only).

The worker's own threads are not read here: torch's intra-op threads spin after each of the
candidate's calls into the baselines' turn (0.04 s of an identity candidate's CPU time beside
0.044 s of the baselines' back-to-back calls on a 2-core CPU, 2026-12-07), so a busy thread
of the candidate's cannot be told from an honest one that way. On a CPU the judge stops the
candidate's process tree around the baselines' calls instead (`Session.candidate_held`).
"""

from __future__ import annotations

import os
from pathlib import Path

from cudaopt.judge.workers.quiet import descendants

#: CPU seconds the candidate's other processes may use over a measurement: a few ticks
#: (10 ms each) of a helper's wake-ups, not one core's share of any measurement.
SPAWNED_MIN_S = 0.05
#: The launchers the judge itself puts around the worker (the sandbox).
WRAPPERS = frozenset({"bwrap"})
_PROC = Path("/proc")
_TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")
#: pid -> (parent pid, name, its own CPU seconds, those of its children it has reaped)
Table = dict[int, tuple[int, str, float, float]]


class Beside:
    """Made as a measurement starts; `reasons` at its end."""

    def __init__(self, launcher: int):
        """`launcher`: the process the judge started for the candidate (the worker itself,
        or the sandbox that runs it)."""
        self.launcher = launcher
        table = _processes()
        self.chain = _chain(table, launcher)
        self.start = self._spawned(table)

    def _spawned(self, table: Table) -> dict[int, float]:
        """CPU seconds of each process below the launcher; of the worker and its wrappers,
        only what their children used that they have reaped."""
        parents = {pid: parent for pid, (parent, *_) in table.items()}
        return {pid: table[pid][3] + (0.0 if pid in self.chain else table[pid][2])
                for pid in descendants(parents, [self.launcher]) if pid in table}

    def reasons(self) -> list[str]:
        """Why the measurement cannot be trusted for the candidate's own processes; empty
        when none ran."""
        end = self._spawned(_processes())
        used_s = sum(cpu - self.start.get(pid, 0.0) for pid, cpu in end.items())
        if used_s < SPAWNED_MIN_S:
            return []
        return [f"processes the candidate started used {used_s:.2f} s of CPU while it was "
                "timed (load of its own, which slows the baselines)"]


def _processes() -> Table:
    table = {}
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        # after the name: state ppid ... utime(11) stime(12) cutime(13) cstime(14)
        own_s, reaped_s = (sum(int(v) for v in fields[i:i + 2]) * _TICK_S for i in (11, 13))
        table[int(entry.name)] = (int(fields[1]), name, own_s, reaped_s)
    return table


def _chain(table: Table, launcher: int) -> set[int]:
    """The launcher, the wrappers below it, and the first process that is none: the worker."""
    chain, pid = {launcher}, launcher
    while pid in table and table[pid][1] in WRAPPERS:
        below = [child for child, (parent, *_) in table.items() if parent == pid]
        if len(below) != 1:
            break
        pid = below[0]
        chain.add(pid)
    return chain
