"""Session fixtures for the user-model tests: one project (a git repository holding the
model's file), its extracted tasks, and one accepted C++ kernel, built once."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture(scope="session")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user's repository: the model file committed, plus an uncommitted edit."""
    root = tmp_path_factory.mktemp("project")
    shutil.copy(HERE / "tinylm.py", root / "tinylm.py")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "tinylm.py")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "model")
    (root / "notes.txt").write_text("work in progress\n")
    return root


@pytest.fixture(scope="session")
def tasks(project: Path) -> dict[str, object]:
    """Norms, MLPs and attentions of the three layers (and the final norm): three tasks."""
    from cudaopt.models.entry import parse_entry
    from cudaopt.models.extract import extract

    entry = parse_entry(f"{project / 'tinylm.py'}:build")
    found = extract(entry, project / "cudaopt-tasks", "cpu",
                    patterns=["blocks.*.norm*", "norm", "blocks.*.mlp", "blocks.*.attn"])
    return {item.cls: item for item in found}


@pytest.fixture(scope="session")
def norm_run(tasks: dict[str, object]) -> Path:
    """What `cudaopt optimize` leaves for the norm task: a run folder whose best/ holds an
    accepted C++ kernel (the kernel is judged by check-model)."""
    task = tasks["RMSNorm"].file
    run = task.parent / ".cudaopt" / "runs" / "norm-1"
    shutil.copytree(HERE / "rmsnorm_cpu", run / "best")
    (run / "meta.json").write_text(json.dumps({"run_id": "norm-1", "task": str(task)}))
    return run
