"""`trajectory.jsonl`: every message and tool result as it happens, one JSON object a line,
so Ctrl-C or a crash loses nothing and `--resume` can rebuild the conversation.

Lines are {"step", "time", "message"} for messages and {"step", "time", "note", ...} for
what cudaopt decided (judgements, nudges, stops); only messages are replayed on resume.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any


class Trajectory:
    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, message: dict[str, Any], step: int) -> None:
        self._write({"step": step, "time": _now(), "message": message})

    def note(self, note: str, step: int, **data: Any) -> None:
        self._write({"step": step, "time": _now(), "note": note, **data})

    def _write(self, entry: dict[str, Any]) -> None:
        with self.path.open("a") as f:
            f.write(json.dumps(entry, default=str) + "\n")

    def messages(self) -> list[dict[str, Any]]:
        """The conversation so far, repaired so that every tool call has an answer."""
        if not self.path.is_file():
            return []
        messages = []
        for line in self.path.read_text().splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:  # a line cut short by a hard kill
                continue
            if "message" in entry:
                messages.append(entry["message"])
        return answer_open_calls(messages)


def answer_open_calls(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tool calls left unanswered by an interruption get an "interrupted" result; providers
    reject a conversation with a dangling call."""
    answered = {m.get("tool_call_id") for m in messages if m.get("role") == "tool"}
    repaired: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        repaired.append(message)
        calls = message.get("tool_calls") or []
        following = messages[index + 1 :]
        if calls and not any(m.get("role") == "assistant" for m in following):
            for call in calls:
                if call.get("id") not in answered:
                    repaired.append(
                        {
                            "role": "tool",
                            "tool_call_id": call.get("id"),
                            "content": "[interrupted: this call did not finish]",
                        }
                    )
    return repaired


def _now() -> str:
    return datetime.now().isoformat(timespec="seconds")
