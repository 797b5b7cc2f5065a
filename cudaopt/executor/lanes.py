"""The lanes of one GPU slot share its device memory. A slot judges one job while its other
lanes prepare the next ones (`default_lookahead`), and preparing holds device memory
too (a baseline's compile runs the model; a candidate's model is built). On an 80 GiB H100
three lanes of KernelBench's 6 GiB-input activations ran the device out of memory, and the
honest candidates were scored as crashes and bad tasks. So a judgement that ran out of
device memory beside other lanes says nothing yet about the candidate or the task: it is run
once more with the slot to itself, the other lanes' processes closed (their idle workers
hold memory too), and what that run says stands.

To make that rare, lanes start jobs only while the footprints of the jobs they hold fit in
the slot's memory (`LaneGate`, with the footprints of `footprints`), and a task known to
need the slot to itself is judged alone from its first try."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import count
from threading import Condition

from cudaopt.executor.base import SlotSpec
from cudaopt.executor.jobs import JobResult

#: What a judgement's error says when a CUDA allocation failed (torch's exception names,
#: the CUDA runtime's message)
_OUT_OF_MEMORY = ("OutOfMemoryError", "out of memory", "out of device memory")
#: The verdicts that blame the task (`bad_input`) or the candidate (`crash`)
_BLAMING = ("bad_input", "crash")
RETRIED_ALONE = "ran out of device memory beside the slot's other lanes: judged again alone"


def out_of_device_memory(result: JobResult) -> bool:
    """A CUDA judgement that failed because an allocation did, in the task's reference or in
    the candidate."""
    verdict = result.verdict or {}
    error = str(verdict.get("error") or "")
    return (verdict.get("device") == "cuda" and verdict.get("status") in _BLAMING
            and any(mark in error for mark in _OUT_OF_MEMORY))


class LaneGate:
    """Per slot, either lanes work side by side within the slot's device memory, or one
    works alone. Lanes enter in the order they asked: one whose job does not fit yet
    keeps later ones from starting, and so does one waiting to work alone, so neither is
    starved by smaller jobs slipping past."""

    def __init__(self, cond: Condition, capacity: dict[str, int] | None = None):
        self._cond = cond  # the executor's, which its slot threads already wait on
        self._capacity = dict(capacity or {})  # slot -> device bytes its lanes may fill
        self._sharing: Counter[str] = Counter()
        self._used: Counter[str] = Counter()  # device bytes the sharing lanes' jobs need
        self._line: dict[str, list[int]] = {}  # slot -> tickets of lanes waiting to enter
        self._tickets = count()
        self._alone: set[str] = set()

    @contextmanager
    def enter(self, slot: str, alone: bool, need_bytes: int = 0) -> Iterator[None]:
        with self._cond:
            ticket = next(self._tickets)
            line = self._line.setdefault(slot, [])
            line.append(ticket)
            while not self._may_enter(slot, ticket, alone, need_bytes):
                self._cond.wait()
            line.remove(ticket)
            if alone:
                self._alone.add(slot)
            else:
                self._sharing[slot] += 1
                self._used[slot] += need_bytes
            self._cond.notify_all()  # the next in line may fit beside this one
        try:
            yield
        finally:
            with self._cond:
                if alone:
                    self._alone.discard(slot)
                else:
                    self._sharing[slot] -= 1
                    self._used[slot] -= need_bytes
                self._cond.notify_all()

    def _may_enter(self, slot: str, ticket: int, alone: bool, need_bytes: int) -> bool:
        if slot in self._alone or self._line[slot][0] != ticket:
            return False
        if alone:
            return not self._sharing[slot]
        capacity = self._capacity.get(slot)
        return (capacity is None or not self._sharing[slot]
                or self._used[slot] + need_bytes <= capacity)


#: What one lane preparing a task takes: its three judge processes and torch.compile's
#: workers keep about this many cores busy, and a KernelBench task's inputs, weights and
#: outputs, held by three processes, about this much device memory.
LANE_CPUS = 3
LANE_DEVICE_BYTES = 24 << 30
MAX_LOOKAHEAD = 3


def default_lookahead(device: str, slots: int) -> int:
    """On GPUs, what `lookahead_for` allows this machine; on CPUs none."""
    if device != "cuda":
        return 0
    import torch

    memory = (torch.cuda.get_device_properties(0).total_memory if torch.cuda.is_available()
              else None)
    return lookahead_for(os.cpu_count() or 2, slots, memory)


def lookahead_for(cpus: int, slots: int, device_bytes: int | None) -> int:
    """As many jobs ahead per GPU slot as the spare cores and the device's memory carry,
    one at least and `MAX_LOOKAHEAD` at most. Preparing a task (the reference's start, the
    candidate's import, the baseline's compile: 10-70 s per real KernelBench task on an
    H200) takes far longer than the GPU's turn for it (about 5 s): with one job ahead the
    GPU waited. On one H200 with 16 cores (3 ahead), a 16-task KernelBench sample went
    from 2.6 to 3.7 tasks per GPU-minute (docs/bench.md)."""
    lanes = (cpus - slots) // (LANE_CPUS * max(1, slots))  # the timing CPUs are reserved
    if device_bytes is not None:
        lanes = min(lanes, device_bytes // LANE_DEVICE_BYTES)
    return max(1, min(MAX_LOOKAHEAD, lanes - 1))


def device_bytes_of(spec: SlotSpec) -> int:
    """A GPU slot's memory, as the parent process sees that GPU."""
    import torch

    return int(torch.cuda.get_device_properties(spec.gpu or 0).total_memory)
