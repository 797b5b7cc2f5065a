"""Where an accepted kernel comes from: a run folder, a git branch, or a plain folder.

Each resolves to one `Source`: the candidate's `model_new.py`, its `kernels/` folder (if any)
and the extracted task it was made for, whose origin header says which submodules, shapes
and dtypes it fits.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cudaopt.models.origin import read_origin
from cudaopt.runs.folder import state_dir
from cudaopt.task import BadInput

REPORT_SUFFIX = ".cudaopt.md"  # the report an optimize branch commits beside the task


@dataclass
class Source:
    label: str  # as the user named it
    model_new: Path
    kernels: Path | None
    task: Path
    origin: dict[str, Any]

    @property
    def folder(self) -> Path:
        return self.model_new.parent


def resolve(source: str | Path, task: Path | None = None, repo: Path | None = None) -> Source:
    label = str(source)
    path = Path(source)
    if path.is_dir():
        if (path / "best" / "model_new.py").is_file():  # a run folder
            return _run(label, path, task)
        return _folder(label, path, task)
    if path.is_file() and path.name == "model_new.py":
        return _folder(label, path.parent, task)
    if isinstance(source, str) and not path.exists():
        return _folder(label, _branch(source, repo or Path.cwd()), task)
    raise BadInput(f"swap source {label!r} is neither a run folder, a folder holding "
                   "model_new.py, nor a git branch")


def _run(label: str, run_dir: Path, task: Path | None) -> Source:
    meta = run_dir / "meta.json"
    if task is None and meta.is_file():
        task = Path(json.loads(meta.read_text())["task"])
    return _folder(label, run_dir / "best", task)


def _folder(label: str, folder: Path, task: Path | None) -> Source:
    model_new = folder / "model_new.py"
    if not model_new.is_file():
        raise BadInput(f"swap source {label!r}: {folder} holds no model_new.py")
    task = task or _find_task(label, folder)
    origin = read_origin(task) if task.is_file() else None
    if origin is None:
        raise BadInput(f"swap source {label!r}: task {task} has no cudaopt-origin header; "
                       "swap kernels made for tasks written by `cudaopt extract`")
    kernels = folder / "kernels"
    return Source(label, model_new.resolve(), kernels.resolve() if kernels.is_dir() else None,
                  task.resolve(), origin)


def _find_task(label: str, folder: Path) -> Path:
    """The report an optimize branch commits names its task; else the only extracted task
    beside model_new.py (or one folder up)."""
    reports = sorted(folder.glob(f"*{REPORT_SUFFIX}"))
    if len(reports) == 1:
        return folder / (reports[0].name.removesuffix(REPORT_SUFFIX) + ".py")
    for place in (folder, folder.parent):
        tasks = [p for p in sorted(place.glob("*.py"))
                 if p.name != "model_new.py" and read_origin(p) is not None]
        if len(tasks) == 1:
            return tasks[0]
        if len(tasks) > 1:
            raise BadInput(f"swap source {label!r}: several extracted tasks in {place} "
                           f"({', '.join(p.name for p in tasks[:4])}); name the task (task=...)")
    raise BadInput(f"swap source {label!r}: no extracted task (a .py file with a "
                   f"cudaopt-origin header) in {folder} or its parent")


def _branch(name: str, where: Path) -> Path:
    """Copy the candidate folder of branch `name` out of git (the working tree untouched)."""
    from git import GitCommandError, InvalidGitRepositoryError, NoSuchPathError, Repo

    try:
        repo = Repo(where, search_parent_directories=True)
        sha = repo.git.rev_parse("--verify", "-q", f"{name}^{{commit}}")
    except (InvalidGitRepositoryError, NoSuchPathError, GitCommandError) as exc:
        raise BadInput(f"swap source {name!r} is not a folder, and not a branch of a git "
                       f"repository at {where}") from exc
    home = repo.working_tree_dir
    if home is None:
        raise BadInput(f"swap source {name!r}: the git repository at {where} is bare, with no "
                       "working tree whose state folder could hold the branch's files")
    files = repo.git.ls_tree("-r", "--name-only", sha).splitlines()
    folders = sorted({f.rpartition("/")[0] for f in files if f.rpartition("/")[2] ==
                      "model_new.py"})
    with_report = [d for d in folders if any(f.startswith(d + "/" if d else "") and
                                             f.endswith(REPORT_SUFFIX) for f in files)]
    chosen = with_report or folders
    if len(chosen) != 1:
        raise BadInput(f"branch {name!r} holds {len(chosen)} candidate folders with a "
                       "model_new.py; check it out and pass the folder instead")
    prefix = chosen[0] + "/" if chosen[0] else ""
    out = state_dir(Path(home)) / "branches" / sha[:12]
    for rel in files:
        inner = rel[len(prefix):]
        if rel.startswith(prefix) and (inner.count("/") == 0 or inner.startswith("kernels/")):
            target = out / inner
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(repo.git.show(f"{sha}:{rel}", stdout_as_string=False,
                                             strip_newline_in_stdout=False))
    return out
