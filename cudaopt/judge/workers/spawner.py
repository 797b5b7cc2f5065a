"""Worker processes started from one thread that lives as long as the judge's process.

The candidate's sandbox asks to die with its parent (bubblewrap's `--die-with-parent`), and
the kernel reads "parent" as the thread that started it (PR_SET_PDEATHSIG), not the
process. A pool used from a short-lived thread (the warm judge answers each connection in
one; so do `cudaopt serve` and the reward service) started its spare candidate there, and
the spare died as the thread ended: every later judgement waited for a new candidate's
start (1.5-2.0 s on a 2-core CPU). Started here, a worker dies with the judge's process, as
the sandbox means, and not before.
"""

from __future__ import annotations

import os
import queue
import subprocess
import threading
from concurrent.futures import Future
from typing import Any

_Job = tuple["Future[subprocess.Popen[Any]]", list[str], dict[str, Any]]
_jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
_started = threading.Lock()
_thread: threading.Thread | None = None


def popen(argv: list[str], **kwargs: Any) -> subprocess.Popen[Any]:
    """`subprocess.Popen(argv, **kwargs)`, made by the spawning thread."""
    global _thread
    with _started:
        if _thread is None:
            _thread = threading.Thread(target=_serve, name="cudaopt-spawner", daemon=True)
            _thread.start()
    future: Future[subprocess.Popen[Any]] = Future()
    _jobs.put((future, argv, kwargs))
    return future.result()


def _serve() -> None:
    while True:
        future, argv, kwargs = _jobs.get()
        try:
            future.set_result(subprocess.Popen(argv, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - the caller raises it
            future.set_exception(exc)


def _forked() -> None:
    """A forked child has no spawning thread: it starts its own when it first needs one."""
    global _thread, _jobs, _started
    _thread, _jobs, _started = None, queue.SimpleQueue(), threading.Lock()


os.register_at_fork(after_in_child=_forked)
