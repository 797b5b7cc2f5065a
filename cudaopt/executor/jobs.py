"""Jobs as plain data: a task and a candidate travel as text, so a job runs the same in a
local slot process or on another host, and identical sources land in identical folders
(content-keyed), which keeps a task's reference workers warm and reuses kernel builds."""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from cudaopt.judge import JudgeOptions

KERNEL_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".h", ".hpp")
_PLAIN_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$")
MAX_SOURCE_BYTES = 1 << 20  # per file: a task or kernel source larger than this is not code


@dataclass(frozen=True)
class Sources:
    """A task file and, optionally, a candidate (`model_new.py` plus its `kernels/`)."""

    task_name: str  # the task file's name, e.g. "19_ReLU.py"
    task: str
    model_new: str | None = None
    kernels: dict[str, str] = field(default_factory=dict)  # file name in kernels/ -> source

    @classmethod
    def from_files(cls, task: Path, candidate: Path | None = None) -> Sources:
        """Read a task and a candidate from disk; `kernels/` beside the candidate comes along."""
        kernels: dict[str, str] = {}
        model_new = None
        if candidate is not None:
            model_new = candidate.read_text()
            folder = candidate.parent / "kernels"
            if folder.is_dir():
                kernels = {p.name: p.read_text() for p in sorted(folder.iterdir())
                           if p.is_file() and p.suffix in KERNEL_SUFFIXES}
        return cls(task.name, task.read_text(), model_new, kernels)

    def validate(self) -> None:
        """Refuse file names that could leave their folder or are not sources, and files
        too large to be code (ValueError naming the first offender): before any write."""
        bad = [n for n in self.kernels if not _PLAIN_NAME.match(n) or
               not n.endswith(KERNEL_SUFFIXES)]
        if bad or not _PLAIN_NAME.match(self.task_name) or not self.task_name.endswith(".py"):
            raise ValueError(f"not a plain source file name: {(bad or [self.task_name])[0]!r}")
        texts = {self.task_name: self.task, "model_new.py": self.model_new or "", **self.kernels}
        for name, text in texts.items():
            if len(text.encode()) > MAX_SOURCE_BYTES:
                raise ValueError(f"{name} is larger than {MAX_SOURCE_BYTES} bytes")

    @property
    def task_key(self) -> str:
        """Identifies the task by content: jobs with one key can share warm reference workers."""
        return _digest({"name": self.task_name, "task": self.task})

    @property
    def candidate_key(self) -> str:
        return _digest({"model_new": self.model_new, "kernels": self.kernels})

    def materialize(self, root: Path) -> tuple[Path, Path | None]:
        """Write the task (once per content) and the candidate (once per content) under
        `root`; returns their paths. Existing files are left alone, so their modification
        times, and the judge's warm workers keyed on them, stay valid."""
        self.validate()
        task_dir = root / "tasks" / self.task_key
        task_path = _write_once(task_dir / self.task_name, self.task)
        if self.model_new is None:
            return task_path, None
        cand_dir = root / "candidates" / self.candidate_key
        for name, text in self.kernels.items():
            _write_once(cand_dir / "kernels" / name, text)
        return task_path, _write_once(cand_dir / "model_new.py", self.model_new)


@dataclass(frozen=True)
class Job:
    """One unit of work. `kind` names the handler in `cudaopt.executor.slot.HANDLERS`:
    "judge" judges `sources`' candidate; other kinds (an agent run) carry their settings in
    `params`."""

    id: str
    kind: str
    sources: Sources
    options: JudgeOptions
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class JobResult:
    """What came back. `infra_error` set means the machine failed the job (a killed worker, a
    full disk, a lost node): not the candidate's fault, not to be scored or trained on."""

    id: str
    verdict: dict[str, Any] | None = None  # `Verdict.to_json()`
    infra_error: str | None = None
    slot: str = ""  # where it ran, e.g. "cuda:1" or "node-2/cuda:0"
    device_name: str = ""
    torch_version: str = ""
    wall_s: float = 0.0
    attempts: int = 1
    extra: dict[str, Any] = field(default_factory=dict)  # handler-specific (steps, cost, run)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _digest(data: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:20]


def _write_once(path: Path, text: str) -> Path:
    """Writers on several nodes may share `root`: each writes its own temporary file, and
    the rename makes whichever lands last (with the same content) the one that stays."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide it from a sandbox's other user
        os.replace(tmp, path)
    return path
