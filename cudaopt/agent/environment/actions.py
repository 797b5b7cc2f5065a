"""What the model asked for, in one shape whether it came as tool calls or as fenced
blocks in plain text (for models without function calling)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from cudaopt.agent import prompts

# ```bash            ```write PATH
# <command>          <file content>
# ```                ```
_FENCE = re.compile(r"^```(bash|write)[ \t]*([^\n]*)\n(.*?)^```[ \t]*$", re.M | re.S)


@dataclass
class Action:
    name: str
    args: dict[str, Any]
    call_id: str | None = None  # tool-call id to answer; None for text actions
    error: str | None = field(default=None)  # set when the call itself was malformed

    def summary(self) -> str:
        """One line for progress reports and observations."""
        first = next(iter(self.args.values()), "") if self.args else ""
        if self.name == "write":
            first = self.args.get("path", "")
        text = str(first).strip().splitlines()[0] if str(first).strip() else ""
        return f"{self.name} {text}"[:200]


def from_tool_calls(tool_calls: list[dict[str, Any]]) -> list[Action]:
    actions = []
    for call in tool_calls:
        function = call.get("function", {})
        raw = function.get("arguments") or "{}"
        try:
            args = json.loads(raw) if isinstance(raw, str) else dict(raw)
            error = None if isinstance(args, dict) else "arguments must be a JSON object"
        except json.JSONDecodeError as exc:
            args, error = {}, f"arguments are not valid JSON: {exc}"
        actions.append(
            Action(function.get("name", ""), args if not error else {}, call.get("id"), error)
        )
    return actions


def from_text(content: str) -> list[Action]:
    """Fenced ```bash and ```write PATH blocks, in order; other fences are plain text."""
    actions = []
    for match in _FENCE.finditer(content or ""):
        kind, header, body = match.groups()
        if kind == "bash":
            actions.append(Action("bash", {"command": body.strip()}))
        elif header.strip():
            actions.append(Action("write", {"path": header.strip(), "content": body}))
        else:
            actions.append(Action("write", {}, error="```write needs a path: ```write PATH"))
    return actions


def observation(number: int, action: Action, output: str) -> str:
    """One action's result as the text-mode model reads it."""
    return prompts.prompt("observation", number=number, summary=action.summary(), output=output)
