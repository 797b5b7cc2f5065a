"""Where a task's existing candidate lies in a candidates folder. Recognised layouts, first
match wins:

1. a folder per task: `DIR/<task>/model_new.py`, or `DIR/<level>/<task>/model_new.py`, with
   an optional `kernels/` beside it (`<task>` is the task file's stem, e.g. `19_ReLU`);
2. KernelBench's generated kernels (`runs/<run name>/` of its generate and eval scripts):
   `DIR/level_<L>_problem_<N>_sample_<S>_kernel.py`, also under `DIR/<level>/`, matched on the
   problem number (the task file's leading digits) and, when the task's folder name ends
   in digits (`level1`), on the level; `sample` picks S (default 0).
"""

from __future__ import annotations

import re
from pathlib import Path

from cudaopt.bench.suite import Task

_KERNELBENCH = re.compile(r"^level_(\d+)_problem_(\d+)_sample_(\d+)_kernel\.py$")


def find_candidate(task: Task, folder: Path, sample: int = 0) -> Path | None:
    for base in (folder / task.level, folder):
        path = base / task.name / "model_new.py"
        if path.is_file():
            return path
    for base in (folder / task.level, folder):
        found = _kernelbench_file(task, base, sample)
        if found is not None:
            return found
    return None


def _kernelbench_file(task: Task, folder: Path, sample: int) -> Path | None:
    if task.problem is None or not folder.is_dir():
        return None
    level = re.search(r"(\d+)$", task.level)
    for path in sorted(folder.glob("level_*_problem_*_sample_*_kernel.py")):
        found = _KERNELBENCH.match(path.name)
        if found is None or int(found.group(2)) != task.problem or int(found.group(3)) != sample:
            continue
        if level is None or int(found.group(1)) == int(level.group(1)):
            return path
    return None
