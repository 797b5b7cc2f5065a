"""Where a pool's scratch folder lives: the files its workers pass outputs and weights
through."""

from __future__ import annotations

import os
from pathlib import Path

SHM_MIN_FREE_BYTES = 4 << 30


def scratch_root() -> str | None:
    """Outputs that cannot pass by CUDA IPC cross between workers through files: RAM-backed
    /dev/shm when it is roomy (containers often cap it at 64 MiB, and a full tmpfs kills the
    writer with SIGBUS), else the system's temporary folder."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        return None
    stat = os.statvfs(shm)
    return str(shm) if stat.f_bavail * stat.f_frsize >= SHM_MIN_FREE_BYTES else None
