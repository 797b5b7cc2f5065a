"""The jobs waiting for a slot, shared by every executor's slot threads: a slot takes the
next job whose build is done, preferring the task it holds warm; a job whose slot failed
goes back to the front; closing hands back what never started."""

from __future__ import annotations

import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from cudaopt.executor.jobs import Job, JobResult


@dataclass
class Pending:
    job: Job
    future: Future
    ready: Future | None = None  # the build running ahead, if the candidate has kernels
    built: list[Any] = field(default_factory=list)  # where that build is (a cluster's ref)
    attempts: int = 0
    errors: list[str] = field(default_factory=list)  # each failed attempt's infra error
    alone: bool = False  # to be judged with its slot to itself (`lanes`)

    def finish(self, result: JobResult) -> None:
        result.attempts = self.attempts
        if self.errors:
            result.extra["infra_errors"] = list(self.errors)
        self.future.set_result(result)


class JobQueue:
    def __init__(self) -> None:
        self.cond = threading.Condition()  # also guards the executor's own slot state
        self.closed = False
        self._items: list[Pending] = []

    def put(self, pending: Pending, refusal: str | None = None) -> None:
        """Queue it, or resolve it at once as an infrastructure error when closed (or when
        the executor gives a `refusal`)."""
        with self.cond:
            why = "executor closed" if self.closed else refusal
            if why is None:
                self._items.append(pending)
                self.cond.notify_all()
                return
        pending.future.set_result(JobResult(pending.job.id, infra_error=why))

    def take(self, warm_key: str | None) -> Pending | None:
        """The next job whose build is done: the warm task's first, else the oldest. None
        once closed."""
        with self.cond:
            while not self.closed:
                ready = [p for p in self._items if p.ready is None or p.ready.done()]
                if ready:
                    pick = next((p for p in ready if p.job.sources.task_key == warm_key),
                                ready[0])
                    self._items.remove(pick)
                    return pick
                self.cond.wait(timeout=0.2)
            return None

    def requeue(self, pending: Pending) -> None:
        """Back to the front for another slot; when closed, its last failure is its result."""
        with self.cond:
            if not self.closed:
                self._items.insert(0, pending)
                self.cond.notify_all()
                return
        pending.future.set_result(JobResult(pending.job.id, infra_error=pending.errors[-1],
                                            attempts=pending.attempts))

    def drain(self, why: str, close: bool = False) -> None:
        """Resolve every waiting job as an infrastructure error (`why`); `close` also
        refuses later ones and wakes the slots so they stop."""
        with self.cond:
            self.closed = self.closed or close
            left, self._items = self._items, []
            self.cond.notify_all()
        for pending in left:
            pending.future.set_result(JobResult(pending.job.id, infra_error=why))
