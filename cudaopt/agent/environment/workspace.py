"""The environment the model acts in: six tools over one workspace. Every path is resolved
(symlinks included) and must stay inside the workspace; the task and the skills are
read-only. Tool failures come back as text for the model, never as exceptions."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cudaopt.agent.environment.shell import Shell, truncate

MAX_LIST = 200
MAX_READ_CHARS = 60_000
SKIP_DIRS = {".git", "__pycache__", "build", ".cudaopt"}


class ToolError(Exception):
    """A refused or failed tool call; its message is shown to the model."""


@dataclass
class ToolResult:
    output: str
    ok: bool = True


class Workspace:
    """Tools `bash`, `read`, `write`, `edit`, `glob`, `grep` confined to `root`."""

    def __init__(self, root: Path, shell: Shell, read_only: tuple[str, ...] = ()) -> None:
        self.root = root.resolve()
        self.shell = shell
        self.read_only = tuple(self.root / name for name in read_only)
        self._tools: dict[str, Callable[..., str]] = {
            "bash": self.bash,
            "read": self.read,
            "write": self.write,
            "edit": self.edit,
            "glob": self.glob,
            "grep": self.grep,
        }

    def call(self, name: str, args: dict[str, Any]) -> ToolResult:
        tool = self._tools.get(name)
        if tool is None:
            return ToolResult(
                f"error: unknown tool {name!r}; tools: {', '.join(self._tools)}", ok=False
            )
        try:
            return ToolResult(tool(**args))
        except TypeError as exc:
            return ToolResult(f"error: bad arguments for {name}: {exc}", ok=False)
        except (ToolError, OSError, re.error) as exc:
            return ToolResult(f"error: {exc}", ok=False)

    def resolve(self, path: str) -> Path:
        """The real path of `path`, refused when it leaves the workspace."""
        resolved = (self.root / path).resolve()
        if not resolved.is_relative_to(self.root):
            raise ToolError(
                f"{path}: outside the workspace; only files under {self.root} can be used"
            )
        return resolved

    def _writable(self, path: str) -> Path:
        resolved = self.resolve(path)
        for locked in self.read_only:
            if resolved == locked or resolved.is_relative_to(locked):
                raise ToolError(f"{path}: read-only (the task and skills are not yours to edit)")
        return resolved

    def bash(self, command: str) -> str:
        result = self.shell.run(command, self.root)
        if result.timed_out:
            status = f"timed out after {result.elapsed_s:.0f} s and was killed"
        else:
            status = f"exit code {result.exit_code}"
        return f"[{status}]\n{result.output}"

    def read(self, path: str) -> str:
        target = self.resolve(path)
        if not target.is_file():
            raise ToolError(f"{path}: no such file")
        return truncate(target.read_text(errors="replace"), MAX_READ_CHARS)

    def write(self, path: str, content: str) -> str:
        target = self._writable(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
        return f"wrote {len(content)} characters to {target.relative_to(self.root)}"

    def edit(self, path: str, old: str, new: str) -> str:
        target = self._writable(path)
        if not target.is_file():
            raise ToolError(f"{path}: no such file")
        text = target.read_text()
        count = text.count(old) if old else 0
        if count != 1:
            raise ToolError(f"{path}: `old` must occur exactly once, found {count} times")
        target.write_text(text.replace(old, new, 1))
        return f"edited {target.relative_to(self.root)}"

    def glob(self, pattern: str) -> str:
        if Path(pattern).is_absolute() or ".." in Path(pattern).parts:
            raise ToolError("glob patterns are relative to the workspace and stay inside it")
        found = [p for p in sorted(self.root.glob(pattern)) if self._inside(p)]
        lines = [p.relative_to(self.root).as_posix() for p in found[:MAX_LIST]]
        if len(found) > MAX_LIST:
            lines.append(f"[... {len(found) - MAX_LIST} more]")
        return "\n".join(lines) or "no matches"

    def grep(self, pattern: str, path: str = ".") -> str:
        regex = re.compile(pattern)
        start = self.resolve(path)
        files = [start] if start.is_file() else sorted(_walk(start))
        hits: list[str] = []
        for file in files:
            if not self._inside(file):
                continue
            for number, line in enumerate(_text_lines(file), 1):
                if regex.search(line):
                    hits.append(f"{file.relative_to(self.root).as_posix()}:{number}: {line}")
                    if len(hits) >= MAX_LIST:
                        return "\n".join(hits + ["[... more matches cut]"])
        return "\n".join(hits) or "no matches"

    def _inside(self, path: Path) -> bool:
        return path.resolve().is_relative_to(self.root)


def _walk(folder: Path) -> list[Path]:
    return [
        p
        for p in folder.rglob("*")
        if p.is_file() and not SKIP_DIRS.intersection(p.relative_to(folder).parts)
    ]


def _text_lines(file: Path) -> list[str]:
    data = file.read_bytes()[:1_000_000]
    if b"\0" in data:
        return []
    return data.decode(errors="replace").splitlines()
