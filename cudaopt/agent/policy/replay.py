"""`replay:PATH`: re-play the assistant turns of a recorded trajectory. The actions run for
real (builds, verification, timing on this machine); only the model's words are canned.
Used for the README's offline demo and to reproduce a result on another GPU."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from cudaopt.agent.errors import PreflightError, ReplayExhausted


def load_turns(path: Path) -> list[dict[str, Any]]:
    """Assistant messages of a trajectory file, or of a run directory's trajectory."""
    if path.is_dir():
        path = path / "trajectory.jsonl"
    if not path.is_file():
        raise PreflightError(f"replay: no trajectory at {path}")
    turns = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            message = json.loads(line).get("message")
        except (json.JSONDecodeError, AttributeError) as exc:
            raise PreflightError(f"replay: {path}:{number} is not a trajectory line") from exc
        if message and message.get("role") == "assistant":
            turns.append(
                {k: v for k, v in message.items() if k in ("role", "content", "tool_calls")}
            )
    return turns


def recorded_device(path: Path) -> str | None:
    """The device a trajectory was recorded for, from its first user message ("Device: cuda."):
    a CUDA session replayed on a machine without a GPU cannot reach the same result."""
    if path.is_dir():
        path = path / "trajectory.jsonl"
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        try:
            message = json.loads(line).get("message") or {}
        except (json.JSONDecodeError, AttributeError):
            continue
        if message.get("role") == "user":
            found = re.search(r"\bDevice: (\w+)", str(message.get("content", "")))
            return found[1] if found else None
    return None


class ReplayModel:
    cost_usd = 0.0

    def __init__(self, path: Path, skip: int = 0) -> None:
        self.name = f"replay:{path}"
        self.path = path
        self._turns = load_turns(path)
        self._next = skip
        self.uses_tools = any(t.get("tool_calls") for t in self._turns)

    def preflight(self) -> None:
        if not self._turns:
            raise PreflightError(f"replay: {self.path} holds no assistant turns")

    def query(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> dict[str, Any]:
        if self._next >= len(self._turns):
            raise ReplayExhausted(f"replay: all {len(self._turns)} recorded turns played")
        turn = self._turns[self._next]
        self._next += 1
        return json.loads(json.dumps(turn))
