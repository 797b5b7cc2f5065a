"""`/verify`: a batch of candidates judged on the executor's slots, answered in order.

Backpressure is a bound on waiting candidates per slot: a batch that would overflow it is
refused whole, at once, with an estimate of when there will be room, never queued to hang.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import deque
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from cudaopt.env.errors import bad, busy
from cudaopt.executor import Executor, Job, JobResult, Sources
from cudaopt.judge import JudgeOptions


class Verifier:
    def __init__(self, executor: Executor, options: JudgeOptions, queue_per_slot: int,
                 timeout_s: float):
        self.executor, self.options, self.timeout_s = executor, options, timeout_s
        self.capacity = queue_per_slot * max(1, len(executor.slots))
        self.pending = 0
        self._lock = threading.Lock()
        self._recent_s: deque[float] = deque(maxlen=64)  # job walls, for Retry-After

    def verify(self, batch: list[Sources]) -> list[dict[str, Any]]:
        self._admit(len(batch))
        try:
            submitted = time.monotonic()
            futures = [self.executor.submit(Job(uuid.uuid4().hex[:12], "judge", s, self.options))
                       for s in batch]
            return [self._answer(f, submitted) for f in futures]
        finally:
            with self._lock:
                self.pending -= len(batch)

    def _admit(self, count: int) -> None:
        with self._lock:
            if count > self.capacity:
                raise bad(f"items: {count} candidates, more than this service queues "
                          f"({self.capacity}); split the batch")
            if self.pending + count > self.capacity:
                raise busy(f"{self.pending} candidates waiting, room for {self.capacity}",
                           self.retry_after_s(count))
            self.pending += count

    def retry_after_s(self, count: int) -> float:
        """When the queue should have room for `count` more: the backlog at the recent pace."""
        per_job = sorted(self._recent_s)[len(self._recent_s) // 2] if self._recent_s else 10.0
        slots = max(1, len(self.executor.slots))
        overflow = self.pending + count - self.capacity
        return per_job * max(1, overflow) / slots

    def _answer(self, future: Future[JobResult], submitted: float) -> dict[str, Any]:
        deadline = submitted + self.timeout_s
        try:
            result = future.result(timeout=max(0.0, deadline - time.monotonic()))
        except FutureTimeout:
            return _result(None, f"the service gave no verdict within {self.timeout_s:.0f} s")
        self._recent_s.append(result.wall_s)
        waited = max(0.0, time.monotonic() - submitted - result.wall_s)
        answer = _result(result.verdict, result.infra_error)
        ahead = result.extra.get("build_ahead_s", 0.0)
        answer.update(slot=result.slot, wall_s=round(result.wall_s, 3), attempts=result.attempts,
                      build_ahead_s=round(ahead, 3), queue_s=round(max(0.0, waited - ahead), 3))
        return answer


def _result(verdict: dict[str, Any] | None, infra_error: str | None) -> dict[str, Any]:
    """The contract's shape. An infrastructure error has no reward (null): not the
    candidate's failure, so not a -1 to train on."""
    if infra_error is not None or verdict is None:
        return {"reward": None, "correct": False, "verdict": verdict,
                "infra_error": infra_error or "no verdict came back"}
    return {"reward": verdict["reward"], "correct": bool(verdict["correct"]),
            "infra_error": None, "verdict": verdict}
