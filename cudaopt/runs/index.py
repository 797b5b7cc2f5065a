"""Finding runs again from anywhere in the repository.

A run lives beside its task (`<task dir>/.cudaopt/runs/<id>/`), but the user usually stands
at the repository root, or in another folder of it. Each new run therefore leaves a pointer
in the index of the repository root (`<root>/.cudaopt/index/<id>`, a file holding the run's
path) and of the working folder it was started from when that folder holds the task; the
search reads the runs and the index of the working folder and each folder above it, up to
the repository root.
"""

from __future__ import annotations

from pathlib import Path

from cudaopt.runs.folder import STATE_DIR, RunMeta, read_meta, state_dir

INDEX = "index"


def repo_root(start: Path) -> Path | None:
    """The nearest folder at or above `start` holding `.git` (a folder, or a worktree's file)."""
    start = start.resolve()
    for folder in [start, *start.parents]:
        if (folder / ".git").exists():
            return folder
    return None


def register(run_dir: Path, task: Path, cwd: Path | None = None) -> None:
    """Point the index of the task's repository root, and of the working folder when it
    holds the task, at `run_dir`; a folder we may not write to only loses the shortcut."""
    run_dir, task_dir = run_dir.resolve(), task.resolve().parent
    cwd = (cwd or Path.cwd()).resolve()
    roots = {root for root in (repo_root(task_dir), cwd if task_dir.is_relative_to(cwd) else None)
             if root is not None}
    for root in roots:
        if (root / STATE_DIR / "runs") == run_dir.parent:
            continue  # kept there already
        try:
            index = state_dir(root) / INDEX
            index.mkdir(exist_ok=True)
            (index / run_dir.name).write_text(f"{run_dir}\n")
        except OSError:
            continue


def search_dirs(start: Path | None = None) -> list[Path]:
    """`start` (default: the working folder) and each folder above it, to the repository
    root (or only `start` outside a repository)."""
    start = (start or Path.cwd()).resolve()
    root = repo_root(start)
    if root is None:
        return [start]
    return [start, *[p for p in start.parents if p.is_relative_to(root)]]


def _candidates(folder: Path) -> list[Path]:
    state = folder / STATE_DIR
    found = [p for p in (state / "runs").iterdir()] if (state / "runs").is_dir() else []
    index = state / INDEX
    for pointer in index.iterdir() if index.is_dir() else []:
        try:
            found.append(Path(pointer.read_text().strip()))
        except OSError:
            continue
    return found


def list_runs(folders: list[Path]) -> list[tuple[Path, RunMeta]]:
    """Runs kept in, or indexed by, the state folders of `folders`; newest first."""
    found: dict[Path, tuple[Path, RunMeta]] = {}
    for folder in folders:
        for run_dir in _candidates(folder):
            key = run_dir.resolve()
            if key in found or not (run_dir / "meta.json").is_file():
                continue  # an index entry whose run was deleted is simply stale
            try:
                found[key] = (run_dir, read_meta(run_dir))
            except (OSError, ValueError, TypeError):
                continue
    return sorted(found.values(), key=lambda item: item[1].started, reverse=True)
