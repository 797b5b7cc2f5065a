"""The judge's own processes started ahead of need, kept from the timed calls' CPUs.

A warm pool starts the next candidate process (and, ahead of a bench's next task, reference
processes) while the current judgement runs, so that their `import torch`, seconds of CPU,
overlaps the judgement instead of following it. On a GPU the timing thread has a CPU of its
own (`timing.pinning`). On a CPU the timed workers' threads take the cores, and a process
importing torch beside them takes cores from whichever call runs at that moment: on 2 cores,
an unchanged model with a Linear layer, whose two threads wait for each other, was timed at
0.02x its eager speed after another task's judgement in the same pool, and small tasks
scattered past the noise margin. The contention probe cannot tell: the judge's descendants
are its own work, not another user's load. So those processes, and any they started, are
stopped for the timing and continued after it; nothing of theirs is lost, only delayed.

On a GPU they run on through the timing, only not on the timing thread's CPU (`kept_off`):
a process importing torch there would slow the launches of whichever contestant is timed
at that moment, and the scheduler does not keep them apart by itself.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

from cudaopt.judge.workers.proctable import below, children_listed, processes


def family(pids: list[int]) -> list[int]:
    """`pids` and every descendant of theirs alive now, each parent before its children
    (read from /proc, where a sandbox's processes show under the host's numbers)."""
    return below(processes(), pids)


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False  # gone
    return state not in "TtZX"


def _signal(pids: list[int], sig: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


@contextlib.contextmanager
def stopped(pids: list[int]) -> Iterator[list[int]]:
    """`pids` and their descendants stopped (SIGSTOP) for the block, continued after it,
    children first; yields what it stopped."""
    held = _stop(list(dict.fromkeys(pids)), time.monotonic() + 1.0)
    try:
        yield held
    finally:
        _signal(held[::-1], signal.SIGCONT)


def _stop(pids: list[int], deadline: float) -> list[int]:
    """Stop `pids`, then the processes below them, a generation at a time, each waited for
    (a signal lands when its process is next scheduled; up to `deadline`) before the next
    is looked for: a stopped process starts none, so none started meanwhile is missed."""
    held, seen, found = [], set(pids), pids
    while found:
        _stop_now(found, deadline)
        held += found
        found = [pid for pid in _below(held, found) if pid not in seen]
        seen.update(found)
    return held


def _below(held: list[int], last: list[int]) -> list[int]:
    """The children of the `last` processes stopped, from the kernel's lists of them; where
    those cannot be had or trusted, every process below those `held`, from one read of all
    of /proc."""
    listed = children_listed(last)
    return family(held) if listed is None else listed


def _stop_now(pids: list[int], deadline: float) -> None:
    _signal(pids, signal.SIGSTOP)
    while any(_running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.0001)


def _threads(pid: int) -> list[int]:
    try:
        return [int(tid) for tid in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return []  # gone


@contextlib.contextmanager
def kept_off(pids: list[int], cpus: set[int]) -> Iterator[list[int]]:
    """Every thread of `pids` and their descendants moved off `cpus` for the block, and given
    back the CPUs it had after it; yields the threads it moved. A thread or process started
    meanwhile inherits the narrowed set and gets its root's whole set back after the block.
    One that may use no other CPU, or may not be moved, is left as it is."""
    moved: dict[int, set[int]] = {}
    wide = {root: _affinity(root) for root in pids}
    for root in pids:
        for tid in (t for pid in family([root]) for t in _threads(pid)):
            held = _affinity(tid)
            with contextlib.suppress(OSError):
                if held & cpus and held - cpus:
                    os.sched_setaffinity(tid, held - cpus)
                    moved[tid] = held
    try:
        yield list(moved)
    finally:
        for root in pids:
            narrowed = wide[root] - cpus
            for tid in (t for pid in family([root]) for t in _threads(pid)):
                back = moved.get(tid) or (wide[root] if _affinity(tid) == narrowed else None)
                with contextlib.suppress(OSError):
                    if back:
                        os.sched_setaffinity(tid, back)


def _affinity(tid: int) -> set[int]:
    try:
        return os.sched_getaffinity(tid)
    except OSError:
        return set()  # gone, or not ours to read
