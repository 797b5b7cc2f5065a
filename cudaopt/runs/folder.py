"""Where a run keeps its state: `<task dir>/.cudaopt/runs/<run id>/`.

The `.cudaopt/` folder ignores itself (a `.gitignore` holding `*`), so run state never shows
up in the user's `git status`. Layout of one run directory:

    meta.json            RunMeta below, rewritten as the run progresses
    trajectory.jsonl     every message and tool result, one JSON object per line
    workspace/           the agent's workspace (model.py, model_new.py, kernels/, skills/)
    candidates/NNN/      each judged candidate: model_new.py, kernels/, verdict.json
    best/                snapshot of the best verified candidate so far
    final_verdict.json   the fresh-process re-check of the best candidate; the only one that counts
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

STATE_DIR = ".cudaopt"
#: File names that say nothing about the task (every KernelBench task is `model.py`): such a
#: task is named after its folder instead.
GENERIC_STEMS = frozenset({"model", "models", "task", "main", "reference", "ref", "__init__"})


@dataclass
class RunMeta:
    run_id: str
    task: str  # absolute path of the task file
    model: str
    device: str
    started: str  # ISO 8601, local time
    api_base: str | None = None
    status: str = "running"  # running | accepted | not_accepted | interrupted | failed
    finished: str | None = None
    best_speedup_vs_compile: float | None = None
    best_speedup_vs_eager: float | None = None
    branch: str | None = None
    commit: str | None = None
    cost_usd: float = 0.0
    steps: int = 0
    wall_s: float = 0.0
    gpu: str | None = None
    torch_version: str | None = None
    pid: int | None = None  # the process driving the run while it is "running"
    host: str | None = None
    extra: dict = field(default_factory=dict)

    def mark_running(self) -> None:
        """Owned by this process: a run whose process is gone is no longer "running"."""
        self.status, self.finished = "running", None
        self.pid, self.host = os.getpid(), socket.gethostname()

    @property
    def orphaned(self) -> bool:
        """Says "running", but its process on this machine is gone (killed, crashed)."""
        if self.status != "running" or self.pid is None or self.host != socket.gethostname():
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False


def state_dir(task_dir: Path) -> Path:
    """The self-ignoring state folder beside a task, created on first use."""
    root = task_dir / STATE_DIR
    root.mkdir(parents=True, exist_ok=True)
    ignore = root / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n")
    return root


def runs_root(task_dir: Path) -> Path:
    return state_dir(task_dir) / "runs"


def task_name(task: Path) -> str:
    """What runs and branches call a task: its file's stem, or its folder's name when the
    stem is generic (`level1/19_ReLU/model.py` is `19_ReLU`)."""
    task = Path(task)
    if task.stem.lower() in GENERIC_STEMS and task.resolve().parent.name:
        return task.resolve().parent.name
    return task.stem


def new_run_dir(task: Path, now: datetime | None = None) -> Path:
    """A fresh, uniquely named run directory for `task`."""
    stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S")
    root = runs_root(task.resolve().parent)
    root.mkdir(parents=True, exist_ok=True)
    base = f"{task_name(task)}-{stamp}"
    path, n = root / base, 1
    while path.exists():
        n += 1
        path = root / f"{base}-{n}"
    path.mkdir()
    return path


def write_meta(run_dir: Path, meta: RunMeta) -> None:
    tmp = run_dir / "meta.json.tmp"
    tmp.write_text(json.dumps(asdict(meta), indent=2) + "\n")
    tmp.replace(run_dir / "meta.json")


def read_meta(run_dir: Path) -> RunMeta:
    data = json.loads((run_dir / "meta.json").read_text())
    known = RunMeta.__dataclass_fields__
    meta = RunMeta(**{k: v for k, v in data.items() if k in known})
    if meta.orphaned:  # killed: what it saved after its last step stands, and it can resume
        meta.status = "interrupted"
        meta.extra.setdefault("stop_reason", "killed")
    return meta
