"""One judgement at a time per device, across processes: a slot process judging `/verify`
candidates and the episodes' own judges on the same GPU must never time at once."""

from __future__ import annotations

import fcntl
import os
import threading
from pathlib import Path

from cudaopt.executor.base import SlotSpec


class DeviceLock:
    """A context manager like `threading.Lock` (what `JudgePool.lock` expects) that also
    holds an exclusive `flock` on a file named for the device while it is held."""

    def __init__(self, path: Path):
        self.path = path
        self._thread = threading.Lock()
        self._fd: int | None = None

    def __enter__(self) -> DeviceLock:
        self._thread.acquire()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            self._thread.release()
            raise
        self._fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the only descriptor releases the flock
        self._thread.release()


def device_lock(root: Path, slot: SlotSpec) -> DeviceLock:
    """The lock of `slot`'s device, shared by everything judging under `root`."""
    return DeviceLock(root / "locks" / (slot.name.replace(":", "-").replace("/", "_") + ".lock"))
