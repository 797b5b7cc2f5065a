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
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

STATE_DIR = ".cudaopt"


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
    extra: dict = field(default_factory=dict)


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


def new_run_dir(task: Path, now: datetime | None = None) -> Path:
    """A fresh, uniquely named run directory for `task`."""
    stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S")
    root = runs_root(task.resolve().parent)
    root.mkdir(parents=True, exist_ok=True)
    base = f"{task.stem}-{stamp}"
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
    return RunMeta(**{k: v for k, v in data.items() if k in known})


def list_runs(search_dirs: list[Path]) -> list[tuple[Path, RunMeta]]:
    """Runs found under the state folders of `search_dirs`, newest first."""
    found: list[tuple[Path, RunMeta]] = []
    for d in search_dirs:
        root = d / STATE_DIR / "runs"
        if not root.is_dir():
            continue
        for run_dir in root.iterdir():
            if (run_dir / "meta.json").is_file():
                try:
                    found.append((run_dir, read_meta(run_dir)))
                except (ValueError, TypeError):
                    continue
    found.sort(key=lambda item: item[1].started, reverse=True)
    return found
