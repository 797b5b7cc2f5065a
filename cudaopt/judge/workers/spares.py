"""The processes a pool starts before a judgement asks for them.

A worker spends seconds importing torch (and, for one that will compile the baselines,
torch.compile's machinery). Started ahead, that time overlaps the caller's own start, the
build, or the previous task's timing, instead of following it. Three kinds wait here: the
next candidate's process, reference processes with no task loaded, and one reference
process meant to compile and time the baselines.
"""

from __future__ import annotations

from collections.abc import Callable

from cudaopt.judge.workers.child import Worker
from cudaopt.judge.workers.lending import untouched


class Spares:
    """`ahead`: whatever is taken is replaced at once (a pool whose next judgement is
    usually another task's); `keep_warm`: a pool that judges again at all (else nothing is
    started before it is asked for)."""

    def __init__(self, start_candidate: Callable[[], Worker],
                 start_reference: Callable[[str, bool], Worker], keep_warm: bool,
                 ahead: bool):
        self._start_candidate = start_candidate
        self._start_reference = start_reference
        self.keep_warm = keep_warm
        self.ahead = ahead
        self.candidate: Worker | None = None
        self.fresh: list[Worker] = []  # reference processes, no task loaded
        self.baseline: Worker | None = None  # one to compile the baselines (prewarmed)

    def take_candidate(self) -> Worker:
        """The spare candidate process (already past `import torch`); the next starts now."""
        spare = self.candidate
        worker = spare if spare is not None and spare.alive else self._start_candidate()
        self.candidate = self._start_candidate() if self.keep_warm else None
        return worker

    def start(self, references: int, prewarm: bool = False) -> None:
        """A candidate process and `references` reference processes; with `prewarm`, the
        second is the one that will compile the baselines, and it imports and exercises
        torch.compile's machinery while it waits."""
        if self.candidate is None:
            self.candidate = self._start_candidate()
        if prewarm and references >= 2 and self.baseline is None:
            self.baseline = self._start_reference("baseline", True)
        if self.baseline is not None:
            references -= 1
        while len(self.fresh) < references:  # a warm pool's may trade roles
            self.fresh.append(self._start_reference("reference", prewarm and self.keep_warm))

    def ensure_baseline(self) -> None:
        """A baseline process started now, for a judgement that will need one."""
        if self.baseline is None:
            self.baseline = self._start_reference("baseline", True)

    def take_reference(self, name: str, prewarm: bool, compiles: bool) -> Worker:
        """A reference process ("baseline": one to time the baselines, compiling them with
        `compiles`): one started ahead if there is one, else a new one."""
        if name == "baseline" and self.baseline is not None:
            worker, self.baseline = self.baseline, None
            if self.ahead:
                self.baseline = self._start_reference("baseline", True)
            if untouched(worker):
                return worker
            worker.discard()
        for worker in [w for w in self.fresh if not untouched(w)]:
            self.fresh.remove(worker)
            worker.discard()
        usable = [w for w in self.fresh if not (name == "baseline" and w.profiled)]
        if usable:
            self.fresh.remove(usable[0])
            if self.ahead:
                self.fresh.append(self._start_reference("reference", False))
            return usable[0]
        return self._start_reference(name, prewarm or (name == "baseline" and compiles))

    def adopt(self, references: list[Worker], baseline: Worker | None) -> None:
        """Loaded processes given back to wait again (a reseed): `baseline` keeps its role
        where no other is waiting for it."""
        if baseline is not None and self.baseline is None:
            self.baseline = baseline
        elif baseline is not None:
            references = [*references, baseline]
        self.fresh += references

    def holds(self, worker: Worker) -> bool:
        return any(worker is w for w in [*self.fresh, self.baseline])

    def pids(self) -> list[int]:
        """The live processes waiting here."""
        return [w.proc.pid for w in (self.candidate, self.baseline, *self.fresh)
                if w is not None and w.alive]

    def close(self) -> None:
        """Killed, not asked to exit: a process still importing torch would keep the asker
        waiting for the import."""
        for worker in [*self.fresh, self.candidate, self.baseline]:
            if worker is not None:
                worker.discard()
        self.fresh, self.candidate, self.baseline = [], None, None
