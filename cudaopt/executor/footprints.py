"""How much device memory each task's judgement holds, learnt from its verdicts and kept
across runs, so a GPU slot's lanes are sized by what their tasks hold (`lanes.LaneGate`)
rather than by one figure for every task.

A task's footprint is the verdict's `device_memory_gib` (each of the judgement's processes'
peak, summed) and their CUDA contexts. A run that knows every task's footprint starts no
job that would run the device out of memory beside the others, where the first run, which
counts each task as an equal share, may: a 16-task KernelBench sample's second run, its
compiles cached, had to judge four of its tasks again alone on an 80 GiB H100. Footprints
only schedule: a wrong one costs a retry, never a verdict.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from pathlib import Path

from cudaopt.executor.jobs import JobResult
from cudaopt.judge import JudgeOptions, cache_root

GiB = 1 << 30
#: Beyond what a judgement's processes hold in tensors: their three CUDA contexts
CONTEXT_BYTES = 2 * GiB
#: Footprints kept at most: the most recently learnt stay
MOST_KEPT = 5000


def default_path() -> Path:
    """Beside the judge's caches: what a task holds is the same from run to run."""
    return cache_root(JudgeOptions()) / "executor" / "footprints.json"


class Footprints:
    """Task key -> the device bytes its judgement needs, contexts included. Shared by an
    executor's slot threads."""

    def __init__(self, path: Path | None):
        self.path = path
        self._lock = threading.Lock()
        self._known: dict[str, int] = _read(path) if path else {}

    def need(self, task_key: str) -> int | None:
        """The bytes a job of this task needs, or None when never judged here."""
        with self._lock:
            return self._known.get(task_key)

    def learn(self, task_key: str, result: JobResult) -> None:
        """From a finished CUDA judgement that says what it held; anything else (a CPU
        judgement, a build that failed before any process held memory) teaches nothing."""
        verdict = result.verdict or {}
        gib = verdict.get("device_memory_gib")
        if (verdict.get("device") != "cuda" or isinstance(gib, bool)
                or not isinstance(gib, (int, float)) or not 0 < gib < float("inf")):
            return
        value = int(gib * GiB) + CONTEXT_BYTES
        with self._lock:
            self._known = _remember(self._known, task_key, value)
        if self.path is not None:
            _write(self.path, task_key, value)


def _remember(known: dict[str, int], task_key: str, value: int) -> dict[str, int]:
    """`known` with `task_key` set last (the most recent), the oldest beyond `MOST_KEPT`
    left out."""
    known = {k: v for k, v in known.items() if k != task_key}
    known[task_key] = value
    return dict(list(known.items())[-MOST_KEPT:])


def _read(path: Path) -> dict[str, int]:
    """A missing or unreadable file is no footprints: every task starts unknown."""
    try:
        found = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(found, dict):
        return {}
    return {str(k): v for k, v in found.items()
            if isinstance(v, int) and not isinstance(v, bool) and v > 0}


def _write(path: Path, task_key: str, value: int) -> None:
    """Merge into what is on disk now (other executors on this machine learn too) and
    replace the file whole; a cache that cannot be written only costs the next run."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        known = _remember(_read(path), task_key, value)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".footprints-")
        with os.fdopen(fd, "w") as out:
            json.dump(known, out)
        os.replace(tmp, path)
    except OSError:
        pass
