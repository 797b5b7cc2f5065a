"""Whether another process changed how a trusted worker is scheduled.

Any process of the judge's user can renice a worker's threads or move them to SCHED_IDLE:
an unisolated candidate can, its PID namespace being the host's. A baseline process slowed
that way times eager and torch.compile slower and makes any candidate look faster, in the
judgement under way and in every later one that reuses the process. So the judge reads
each thread's policy and nice from /proc: a baseline scheduled below the judge's own after
its timing makes the verdict noisy, and a warm process so scheduled is never reused (see
`pool`). A process cannot undo this itself: raising a priority needs privilege.
"""

from __future__ import annotations

import os
from pathlib import Path

# of the fields of /proc/PID/task/TID/stat after the command name's closing ")"
_NICE, _POLICY = 16, 38
_POLICIES = {0: "SCHED_OTHER", 1: "SCHED_FIFO", 2: "SCHED_RR", 3: "SCHED_BATCH",
             5: "SCHED_IDLE", 6: "SCHED_DEADLINE"}
#: How much CPU a policy is given, least first (the real-time ones above the rest)
_RANK = {5: 0, 3: 1, 0: 2, 1: 3, 2: 3, 6: 3}


def own() -> tuple[int, int]:
    """The calling thread's (policy, nice): what every worker it starts runs with."""
    return os.sched_getscheduler(0), os.getpriority(os.PRIO_PROCESS, 0)


def departure(pid: int) -> str | None:
    """How one of `pid`'s threads is scheduled to get less CPU than the calling thread
    (`own()`), or None: none is, or the process is gone (its end is reported elsewhere).
    Only slowing counts: a library may raise a thread of its own (an event handler, say),
    and a process faster than the judge's own flatters no candidate."""
    policy, nice = own()
    folder = Path(f"/proc/{pid}/task")
    try:
        threads = os.listdir(folder)
    except OSError:
        return None
    for thread in threads:
        try:
            fields = (folder / thread / "stat").read_text().rsplit(")", 1)[1].split()
            found = (int(fields[_POLICY]), int(fields[_NICE]))
        except (OSError, IndexError, ValueError):
            continue  # a thread that ended meanwhile
        if _slower(found, (policy, nice)):
            return (f"a thread of process {pid} runs as {_name(found)}, the judge as "
                    f"{_name((policy, nice))}")
    return None


def _slower(found: tuple[int, int], expected: tuple[int, int]) -> bool:
    ranks = _RANK.get(found[0], 2), _RANK.get(expected[0], 2)
    return ranks[0] < ranks[1] or (ranks[0] == ranks[1] and found[1] > expected[1])


def _name(scheduling: tuple[int, int]) -> str:
    policy, nice = scheduling
    return f"{_POLICIES.get(policy, f'policy {policy}')} at nice {nice}"

