"""Per-command bounds on memory, processes, file and workspace size, and the notes that
tell the model which bound it ran into.

Memory is bounded with RLIMIT_DATA, not RLIMIT_AS: CUDA reserves tens of GiB of virtual
address space at start-up, so an address-space cap breaks every GPU program, while the data
limit counts only memory a process can write to (heap and private writable mappings). It
is a per-process bound, not a bound on the command as a whole.

Process count: RLIMIT_NPROC is set inside the sandbox's own user namespace, where the
kernel counts only the sandbox's tasks (threads included). The kernel never enforces it
for root (uid 0 outside the namespace), so as root `command` counts the processes of the
sandbox's pid namespace instead and kills the sandbox over the limit (`ProcessCounter`):
a poll, so a fast fork storm may overshoot by what it forks in one poll interval.
"""

from __future__ import annotations

import os
import re
import resource
from dataclasses import dataclass, field
from pathlib import Path

MiB = 1 << 20


def _half_of_ram_mb() -> int:
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2 // MiB


@dataclass(frozen=True)
class SandboxLimits:
    """Bounds of one shell command (the time limit is the shell's own)."""

    memory_mb: int | None = field(default_factory=_half_of_ram_mb)  # per process; None: off
    max_procs: int = 4096  # processes in the sandbox; threads count too, except as root
    file_mb: int = 1024  # largest file a command may write
    workspace_mb: int = 4096  # workspace (+ other writable folders), checked after each command
    tmp_mb: int = 2048  # the private /tmp (bwrap only)
    output_mb: int = 16  # printed output beyond this kills the command


def ulimit_prefix(limits: SandboxLimits, count_procs: bool) -> str:
    """Shell code setting soft and hard limits (the command cannot raise them back).

    Set from inside the sandbox so that RLIMIT_NPROC is counted in its user namespace;
    values are clamped to the hard limits cudaopt itself runs under."""
    parts = [f"ulimit -f {_clamp(resource.RLIMIT_FSIZE, limits.file_mb * 1024, 1024)}"]
    if limits.memory_mb is not None:
        parts.append(f"ulimit -d {_clamp(resource.RLIMIT_DATA, limits.memory_mb * 1024, 1024)}")
    if count_procs:
        parts.append(f"ulimit -u {_clamp(resource.RLIMIT_NPROC, limits.max_procs, 1)}")
    return " && ".join(parts)


def _clamp(which: int, value: int, unit: int) -> int:
    hard = resource.getrlimit(which)[1]
    return value if hard == resource.RLIM_INFINITY else min(value, hard // unit)


class ProcessCounter:
    """Counts the processes of a bwrap sandbox from outside, through the sandbox's own
    /proc (its pid namespace): `/proc/<sandbox init>/root/proc`."""

    def __init__(self, bwrap_pid: int, limit: int) -> None:
        self.bwrap_pid = bwrap_pid
        self.limit = limit
        self._init: int | None = None

    def over(self) -> bool:
        try:
            if self._init is None:
                children = Path(f"/proc/{self.bwrap_pid}/task/{self.bwrap_pid}/children")
                found = children.read_text().split()
                if not found:
                    return False
                self._init = int(found[0])
            entries = os.listdir(f"/proc/{self._init}/root/proc")
        except (OSError, ValueError):
            return False  # starting up or already gone
        return sum(name.isdigit() for name in entries) > self.limit


_MEMORY = re.compile(r"MemoryError|Cannot allocate memory|std::bad_alloc|out of memory", re.I)
_FORK = re.compile(r"fork: (retry: )?Resource temporarily unavailable|BlockingIOError: "
                   r"\[Errno 11\]|can't start new thread|pthread_create", re.I)
_FSIZE = re.compile(r"File size limit exceeded|File too large", re.I)
SIGXFSZ_EXIT = 128 + 25


def limit_notes(output: str, exit_code: int | None, limits: SandboxLimits,
                count_procs: bool) -> list[str]:
    """Which bounds a command probably hit, judged from its output and exit code (a shell
    that carries on after a failed fork still exits 0, so the code alone is not enough)."""
    notes = []
    if exit_code == SIGXFSZ_EXIT or _FSIZE.search(output):
        notes.append(f"file size limit: a file may be at most {limits.file_mb} MB; the write "
                     "past it failed.")
    if limits.memory_mb is not None and _MEMORY.search(output):
        notes.append(f"memory limit: each process may use at most {limits.memory_mb} MB of "
                     "data memory; an allocation past it fails.")
    if count_procs and _FORK.search(output):
        notes.append(f"process limit: at most {limits.max_procs} processes and threads; "
                     "starting more failed.")
    return notes


def folder_size(folder: Path) -> int:
    """Bytes in `folder` (apparent sizes, each inode once, symlinks not followed)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    stack = [folder]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
            elif (info.st_dev, info.st_ino) not in seen:
                seen.add((info.st_dev, info.st_ino))
                total += info.st_size
    return total


def size_note(folders: list[Path], limits: SandboxLimits) -> str | None:
    """An error for the model when its writable folders outgrew the workspace bound."""
    used = sum(folder_size(folder) for folder in folders)
    if used <= limits.workspace_mb * MiB:
        return None
    return (f"workspace size limit: the workspace holds {used / MiB:.1f} MB, over its "
            f"{limits.workspace_mb} MB bound. Delete what you do not need (large outputs, "
            "stale build folders) before going on.")
