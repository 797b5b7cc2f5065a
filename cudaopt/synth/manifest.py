"""`DIR/manifest.jsonl`: one line per composition tried, appended as each is decided, so a
run stopped halfway loses nothing and the next run into the folder continues from it."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Manifest:
    path: Path
    lines: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def open(cls, folder: Path) -> Manifest:
        path = folder / "manifest.jsonl"
        lines = []
        if path.is_file():
            for text in path.read_text().splitlines():
                try:
                    lines.append(json.loads(text))
                except json.JSONDecodeError:
                    continue  # a line cut short by a killed run: that try is simply redone
        return cls(path, lines)

    @property
    def kept(self) -> list[dict[str, Any]]:
        return [line for line in self.lines if line.get("status") == "kept"]

    @property
    def tries(self) -> int:
        """The next attempt number: one past the highest recorded."""
        return max((line.get("attempt", -1) for line in self.lines), default=-1) + 1

    def append(self, line: dict[str, Any]) -> None:
        self.lines.append(line)
        with open(self.path, "a") as out:
            out.write(json.dumps(line) + "\n")

    def statuses(self, since: int = 0) -> Counter[str]:
        return Counter(line["status"] for line in self.lines[since:])
