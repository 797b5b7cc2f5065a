"""Which tasks a bench covers. A suite argument is a task file or a folder; a folder's task
files are its `*.py` files in KernelBench format (`class Model`, `get_inputs`,
`get_init_inputs`), read unchanged. A folder without task files of its own is searched one
level down (`KernelBench/` holds `level1/`, `level2/`, ...). A task folder holding
`model.py` (this project's examples) is named after that folder."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

_TASK_NAMES = {"Model", "get_inputs", "get_init_inputs"}


class SuiteError(ValueError):
    """A suite argument that names nothing to bench: the message says what was expected."""


@dataclass(frozen=True)
class Task:
    path: Path
    name: str  # the task file's stem, or its folder's name for `<folder>/model.py`
    level: str  # the folder the task sits in: KernelBench's "level1", "level2", ...

    @property
    def id(self) -> str:
        """Unique within a bench: the key of its line in results.jsonl."""
        return f"{self.level}/{self.name}"

    @property
    def problem(self) -> int | None:
        """KernelBench's problem number, the leading digits of the name ("19_ReLU" -> 19)."""
        found = re.match(r"(\d+)_", self.name)
        return int(found.group(1)) if found else None


def is_task_file(path: Path) -> bool:
    """KernelBench format, judged from the syntax tree: nothing in the file runs."""
    if path.suffix != ".py" or path.name == "model_new.py" or not path.is_file():
        return False
    try:
        tree = ast.parse(path.read_text())
    except (SyntaxError, UnicodeDecodeError, OSError):
        return False
    names = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    return _TASK_NAMES <= names


def _task(path: Path) -> Task:
    path = path.resolve()
    if path.name == "model.py":
        return Task(path, path.parent.name, path.parent.parent.name)
    return Task(path, path.stem, path.parent.name)


def _folder_tasks(folder: Path, depth: int) -> list[Task]:
    own = [_task(p) for p in sorted(folder.glob("*.py")) if is_task_file(p)]
    if own or depth == 0:
        return own
    found: list[Task] = []
    for sub in sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")):
        found += _folder_tasks(sub, depth - 1)
    return found


def discover(suites: list[Path]) -> list[Task]:
    """Every task of every suite argument, in a stable order, each once."""
    tasks: dict[str, Task] = {}
    for suite in suites:
        if suite.is_file():
            if not is_task_file(suite):
                raise SuiteError(f"{suite} is not a task file: a task defines class Model, "
                                 "get_inputs() and get_init_inputs() (KernelBench format)")
            found = [_task(suite)]
        elif suite.is_dir():
            found = _folder_tasks(suite, depth=2)
            if not found:
                raise SuiteError(f"{suite} holds no task files (KernelBench format: class "
                                 "Model, get_inputs(), get_init_inputs()), nor do its folders")
        else:
            raise SuiteError(f"{suite}: no such file or folder")
        for task in found:
            other = tasks.setdefault(task.id, task)
            if other.path != task.path:
                raise SuiteError(f"two tasks are both named {task.id}: {other.path} and "
                                 f"{task.path}; bench them separately")
    return list(tasks.values())
