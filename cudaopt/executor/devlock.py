"""One judgement at a time per device, across processes: a slot process judging `/verify`
candidates and the episodes' own judges on the same GPU must never time at once, nor may a
bench and a reward service that happen to share a GPU. A GPU's lock is host-wide, named
for the GPU as the host numbers it; CPU slots (which may judge side by side by choice)
lock per executor folder."""

from __future__ import annotations

import fcntl
import os
import re
import tempfile
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
            fd = os.open(self.path, os.O_RDONLY | os.O_CREAT, 0o644)  # flock needs no write
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


def device_lock(root: Path, slot: SlotSpec, gpu: str | None = None) -> DeviceLock:
    """The lock of `slot`'s device: for a GPU (`gpu`, its `gpu_identity`) one per host,
    else one shared by everything judging under `root`."""
    if gpu is None or slot.device != "cuda":
        return DeviceLock(root / "locks" / (slot.name.replace(":", "-").replace("/", "_")
                                            + ".lock"))
    folder = Path(tempfile.gettempdir()) / "cudaopt-devices"
    if not folder.is_dir():
        folder.mkdir(exist_ok=True)
        try:
            folder.chmod(0o1777)  # every user's judges share it, like /tmp itself
        except OSError:
            pass
    return DeviceLock(folder / ("gpu-" + re.sub(r"[^A-Za-z0-9_.-]", "_", gpu) + ".lock"))
