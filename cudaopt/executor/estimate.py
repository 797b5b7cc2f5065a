"""A first guess at the device memory a task's judgement holds, for a task never judged on
this machine, so that a cold bench judges the largest tasks alone from their first try
instead of running the device out of memory beside other lanes and judging them again.

The task is built on PyTorch's `meta` device, which records shapes and allocates nothing:
its inputs, its weights and (where every operator has a meta kernel) its outputs are sized
without a byte of device memory or a GPU. A judgement holds each of these several times
over: three processes, each with its copies of inputs and outputs and its intermediates.
On an 80 GiB H100 (2026-12-05/06) KernelBench's 6 GiB-input activations held 54.5-59.6 GiB
(4.6-5.0 times their inputs and outputs), 94_MSELoss 60.6 GiB (7.6 times), a depthwise
convolution 56.2-60.2 GiB (7.1-7.6 times): hence `PER_BYTE`. A guess only schedules (see
`footprints`): too high costs some look-ahead, too low a retry, never a verdict.

The task is trusted code, as in the judge's reference worker, but it runs in a process of
its own, with no GPU visible and off the timing CPUs, one task at a time and each within
`TIMEOUT_S`; whatever it cannot build or run is no guess.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from cudaopt.executor.jobs import Sources

#: Device bytes a judgement holds per byte of the task's inputs and outputs
PER_BYTE = 8
#: The reference, the baseline and the candidate each hold the task's weights
WEIGHT_COPIES = 3
#: Longest a task may take to be built on the meta device
TIMEOUT_S = 60.0
#: Longest the helper may take to start (to import torch) on a busy host
START_TIMEOUT_S = 120.0


class Estimator:
    """Task key -> guessed bytes, worked out one task at a time in one helper process (it
    imports torch once), in the order the tasks were submitted, so the guess is usually
    ready by the time a lane takes the job."""

    def __init__(self, avoid_cpus: set[int] | None = None, timeout_s: float = TIMEOUT_S):
        self._avoid, self.timeout_s = set(avoid_cpus or ()), timeout_s
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="estimate")
        self._lock = threading.Lock()
        self._futures: dict[str, Future[int | None]] = {}
        self._child: subprocess.Popen[str] | None = None
        self._closed = False
        self._pool.submit(self._start)  # torch's import, before the first task is asked for

    def ahead(self, sources: Sources) -> None:
        """Start on this task's guess, unless it is known or under way."""
        with self._lock:
            if not self._closed and sources.task_key not in self._futures:
                self._futures[sources.task_key] = self._pool.submit(self._ask, sources)

    def bytes_for(self, sources: Sources) -> int | None:
        """The task's guess, waiting for it; None where there is none."""
        self.ahead(sources)
        with self._lock:
            future = self._futures.get(sources.task_key)
        try:
            return future.result() if future is not None else None
        except Exception:  # noqa: BLE001 - cancelled by close: no guess
            return None

    def close(self) -> None:
        """Kill the helper first: a guess under way waits on it. No helper starts after."""
        with self._lock:
            self._closed = True
            child = self._child
        if child is not None:
            child.kill()
        self._pool.shutdown(wait=True, cancel_futures=True)
        if child is not None:
            child.wait()

    def _ask(self, sources: Sources) -> int | None:
        child = self._start()
        if child is None or child.stdin is None or child.stdout is None:
            return None
        try:
            child.stdin.write(json.dumps({"name": sources.task_name, "task": sources.task})
                              + "\n")
            child.stdin.flush()
            reply = _reply(child, self.timeout_s)
        except (OSError, ValueError):
            reply = None
        if not isinstance(reply, dict):  # hung, died or garbled: the next task gets a new one
            self._drop(child)
            return None
        sizes = [reply.get(k) for k in ("in_bytes", "out_bytes", "weight_bytes")]
        if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in sizes):
            return None  # the task could not be built or run there
        return guess(reply)

    def _start(self) -> subprocess.Popen[str] | None:
        """The helper, started and ready (torch imported), or None (closed, or it failed
        to start). Only the estimating thread calls it."""
        if self._child is not None:
            return self._child
        with self._lock:  # `close` kills what this started
            if self._closed:
                return None
            child = self._child = subprocess.Popen(
                [sys.executable, "-m", "cudaopt.executor.sizes"], text=True,
                env={**os.environ, "CUDA_VISIBLE_DEVICES": ""}, stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
        allowed = os.sched_getaffinity(0) - self._avoid
        if allowed:
            os.sched_setaffinity(child.pid, allowed)
        try:  # its start (torch's import) is not counted as the first task's time
            if _reply(child, START_TIMEOUT_S) == {"ready": True}:
                return child
        except (OSError, ValueError):
            pass
        self._drop(child)
        return None

    def _drop(self, child: subprocess.Popen[str]) -> None:
        child.kill()
        child.wait()
        self._child = None


def _reply(child: subprocess.Popen[str], timeout_s: float) -> Any:
    """The helper's next line, parsed; None when none came within `timeout_s`."""
    assert child.stdout is not None
    ready, _, _ = select.select([child.stdout], [], [], timeout_s)
    return json.loads(child.stdout.readline()) if ready else None


def guess(sizes: dict[str, Any]) -> int:
    """Device bytes from the sizes the helper found (`sizes.measure`)."""
    return PER_BYTE * (sizes["in_bytes"] + sizes["out_bytes"]) + WEIGHT_COPIES * sizes[
        "weight_bytes"]
