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

from cudaopt.judge.workers.proctable import Proc, below, processes

#: CPU seconds the candidate's other processes may use over a measurement: a few ticks
#: (10 ms each) of a helper's wake-ups, not one core's share of any measurement.
SPAWNED_MIN_S = 0.05
#: The launchers the judge itself puts around the worker (the sandbox).
WRAPPERS = frozenset({"bwrap"})
Table = dict[int, Proc]


class Beside:
    """Made as a measurement starts; `reasons` at its end."""

    def __init__(self, launcher: int):
        """`launcher`: the process the judge started for the candidate (the worker itself,
        or the sandbox that runs it)."""
        self.launcher = launcher
        table = processes()
        self.chain = _chain(table, launcher)
        self.start = self._spawned(table)

    def _spawned(self, table: Table) -> dict[int, float]:
        """CPU seconds of each process below the launcher; of the worker and its wrappers,
        only what their children used that they have reaped."""
        return {pid: table[pid].reaped_s + (0.0 if pid in self.chain else table[pid].own_s)
                for pid in below(table, [self.launcher]) if pid in table}

    def reasons(self) -> list[str]:
        """Why the measurement cannot be trusted for the candidate's own processes; empty
        when none ran."""
        end = self._spawned(processes())
        used_s = sum(cpu - self.start.get(pid, 0.0) for pid, cpu in end.items())
        if used_s < SPAWNED_MIN_S:
            return []
        return [f"processes the candidate started used {used_s:.2f} s of CPU while it was "
                "timed (load of its own, which slows the baselines)"]


def _chain(table: Table, launcher: int) -> set[int]:
    """The launcher, the wrappers below it, and the first process that is none: the worker."""
    chain, pid = {launcher}, launcher
    while pid in table and _program(pid, table[pid]) in WRAPPERS:
        children = [child for child, proc in table.items() if proc.parent == pid]
        if len(children) != 1:
            break
        pid = children[0]
        chain.add(pid)
    return chain


def _program(pid: int, proc: Proc) -> str:
    """The name of the program a process runs: its executable's, which only an `exec` can
    change, where that can be read; the short name it goes by (`comm`) otherwise, which any
    process may set for itself (a candidate naming itself after the sandbox would otherwise
    take a child of its own into the chain)."""
    try:
        return os.path.basename(os.readlink(f"/proc/{pid}/exe"))
    except OSError:
        return proc.name
