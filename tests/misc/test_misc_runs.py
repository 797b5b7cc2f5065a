"""Finding runs again: from anywhere in the repository, named after the task's folder when
the file is `model.py`, never `running` after their process died, whole run ids at 80
columns."""

from __future__ import annotations

import json
import socket
import subprocess
from datetime import datetime
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from cudaopt.cli import misc
from cudaopt.runs.folder import new_run_dir, read_meta, task_name, write_meta
from cudaopt.runs.index import register
from tests.misc.misc_helpers import git, make_meta


@pytest.fixture
def app() -> typer.Typer:
    app = typer.Typer()
    misc.register(app)
    return app


def _run(app: typer.Typer, *args: str, columns: int = 250) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": str(columns)})
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def _kernelbench_repo(root: Path) -> Path:
    """A repository whose task is `level1/19_ReLU/model.py`, as in KernelBench."""
    task = root / "level1" / "19_ReLU" / "model.py"
    task.parent.mkdir(parents=True)
    task.write_text("class Model: pass\n")
    (root / "docs").mkdir()
    git(root, "init", "-q")
    return task


def _started_run(task: Path, when: datetime, cwd: Path, **meta: object) -> Path:
    """A run as `cudaopt optimize` lays it out and announces it."""
    run = new_run_dir(task, when)
    register(run, task, cwd)
    write_meta(run, make_meta(task, run.name, started=when.isoformat(), **meta))
    return run


def test_a_kernelbench_task_is_named_after_its_folder(tmp_path: Path) -> None:
    task = tmp_path / "level1" / "19_ReLU" / "model.py"
    task.parent.mkdir(parents=True)
    assert task_name(task) == "19_ReLU" and task_name(tmp_path / "gelu.py") == "gelu"
    run = new_run_dir(task, datetime(2026, 11, 30, 22, 34, 13))
    assert run.name == "19_ReLU-20261130-223413"


def test_runs_are_found_from_anywhere_in_the_repository(
        tmp_path: Path, home: Path, app: typer.Typer, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    task = _kernelbench_repo(root)
    run = _started_run(task, datetime(2026, 11, 30, 22, 34, 13), cwd=root, status="accepted")
    for where in (root, root / "docs", root / "level1", task.parent):
        monkeypatch.chdir(where)
        code, out = _run(app, "runs", "--json")
        assert code == 0 and [r["run_id"] for r in json.loads(out)] == [run.name], where
        assert json.loads(out)[0]["task_name"] == "19_ReLU"
        code, out = _run(app, "show", "latest", "--json")
        assert code == 0 and json.loads(out)["meta"]["run_id"] == run.name
    assert not (root / ".cudaopt" / "runs").exists()  # the root holds a pointer, not the run
    git_status = git(root, "status", "--porcelain", "--untracked-files=all")
    assert ".cudaopt" not in git_status  # the index ignores itself too


def test_a_deleted_run_leaves_no_stale_row(tmp_path: Path, home: Path, app: typer.Typer,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    task = _kernelbench_repo(tmp_path)
    run = _started_run(task, datetime(2026, 1, 1), cwd=tmp_path)
    subprocess.run(["rm", "-r", str(run)], check=True)
    monkeypatch.chdir(tmp_path)
    assert json.loads(_run(app, "runs", "--json")[1]) == []


def test_a_killed_run_is_not_running_forever(tmp_path: Path, home: Path, app: typer.Typer,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    task = _kernelbench_repo(tmp_path)
    gone = subprocess.Popen(["true"])
    gone.wait()  # a real process id, now dead: as after `kill -9` of a run
    when = datetime(2026, 1, 1)
    dead = _started_run(task, when, tmp_path, status="running", pid=gone.pid,
                        host=socket.gethostname())
    alive = _started_run(task, datetime(2026, 1, 2), tmp_path, status="running",
                         pid=subprocess.os.getpid(), host=socket.gethostname())
    assert read_meta(dead).status == "interrupted" and read_meta(alive).status == "running"
    monkeypatch.chdir(tmp_path)
    rows = {r["run_id"]: r["status"] for r in json.loads(_run(app, "runs", "--json")[1])}
    assert rows == {dead.name: "interrupted", alive.name: "running"}
    code, out = _run(app, "show", dead.name)
    assert code == 0 and "its process was killed (resumable with --resume)" in out


def test_runs_table_keeps_whole_run_ids_at_80_columns(
        tmp_path: Path, home: Path, app: typer.Typer, monkeypatch: pytest.MonkeyPatch) -> None:
    task = _kernelbench_repo(tmp_path)
    runs = [_started_run(task, datetime(2026, 11, 30, 22, 34, s), tmp_path, status="accepted",
                         model="hosted_vllm/a-rather-long-policy-name-v2",
                         branch=f"cudaopt/19_ReLU-20261130-2234{s:02d}",
                         best_speedup_vs_compile=2.5) for s in (1, 2)]
    monkeypatch.chdir(tmp_path)
    code, out = _run(app, "runs", columns=80)
    assert code == 0 and max(len(line) for line in out.splitlines()) <= 80
    assert "…" not in out
    for run in runs:
        assert run.name in out
    assert "2.50x" in out and "accepted" in out
