"""The lanes of one GPU slot share its device memory. A slot judges one job while its other
lanes prepare the next ones (`local.default_lookahead`), and preparing holds device memory
too (a baseline's compile runs the model; a candidate's model is built). On an 80 GiB H100
three lanes of KernelBench's 6 GiB-input activations ran the device out of memory, and the
honest candidates were scored as crashes and bad tasks. So a judgement that ran out of
device memory beside other lanes says nothing yet about the candidate or the task: it is run
once more with the slot to itself, the other lanes' processes closed (their idle workers
hold memory too), and what that run says stands."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from threading import Condition

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
    """Per slot, either any number of lanes work side by side, or one works alone. A lane
    waiting to work alone keeps new ones from starting, so it is not starved."""

    def __init__(self, cond: Condition):
        self._cond = cond  # the executor's, which its slot threads already wait on
        self._sharing: Counter[str] = Counter()
        self._waiting: Counter[str] = Counter()
        self._alone: set[str] = set()

    @contextmanager
    def enter(self, slot: str, alone: bool) -> Iterator[None]:
        with self._cond:
            if alone:
                self._waiting[slot] += 1
                while slot in self._alone or self._sharing[slot]:
                    self._cond.wait()
                self._waiting[slot] -= 1
                self._alone.add(slot)
            else:
                while slot in self._alone or self._waiting[slot]:
                    self._cond.wait()
                self._sharing[slot] += 1
        try:
            yield
        finally:
            with self._cond:
                if alone:
                    self._alone.discard(slot)
                else:
                    self._sharing[slot] -= 1
                self._cond.notify_all()
