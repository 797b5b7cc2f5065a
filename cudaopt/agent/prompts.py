"""Prompts, tool schemas and the skill file live under `templates/` and `skills/` as data;
this module only finds and fills them. Placeholders are `{{name}}`; `{{file:PATH}}` pulls in
a file below `skills/` (after the names are filled, so PATH may use them): a markdown file
is filled in turn (the instructions the skill variants share), any other as it is (code)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from cudaopt import SKILLS_DIR, TEMPLATES_DIR

PROMPTS_DIR = TEMPLATES_DIR / "prompts"
TOOL_NAMES = ("bash", "read", "write", "edit", "glob", "grep")

_NAME = re.compile(r"\{\{(\w+)\}\}")
_FILE = re.compile(r"\{\{file:([^{}]+)\}\}")


class TemplateError(KeyError):
    """A template names a value nobody supplied: a bug, not a user error."""


def render(text: str, values: dict[str, Any], include_root: Path | None = None) -> str:
    def name(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in values:
            raise TemplateError(f"template value {key!r} missing")
        return str(values[key])

    text = _NAME.sub(name, text)
    if include_root is not None:
        text = _FILE.sub(lambda m: _included(include_root / m.group(1), values, include_root),
                         text)
    return text


def _included(path: Path, values: dict[str, Any], root: Path) -> str:
    text = path.read_text().rstrip("\n")
    return render(text, values, root) if path.suffix == ".md" else text


def prompt(name: str, **values: Any) -> str:
    """`templates/prompts/<name>.md` filled with `values`."""
    return render((PROMPTS_DIR / f"{name}.md").read_text(), values).strip()


def template(name: str, **values: Any) -> str:
    """`templates/workspace/<name>` filled with `values`."""
    return render((TEMPLATES_DIR / "workspace" / name).read_text(), values)


def skill(**values: Any) -> str:
    """The skill for one task, device and backend (`skills/SKILL.md`, or
    `skills/SKILL_<backend>.md` where the backend has its own), examples pulled in."""
    own = SKILLS_DIR / f"SKILL_{values.get('backend', 'cuda')}.md"
    path = own if own.is_file() else SKILLS_DIR / "SKILL.md"
    return render(path.read_text(), values, include_root=SKILLS_DIR)


def tool_schemas() -> list[dict[str, Any]]:
    """The OpenAI function-calling schemas of the six tools (DESIGN.md §5)."""
    schemas = json.loads((PROMPTS_DIR / "tools.json").read_text())
    names = tuple(s["function"]["name"] for s in schemas)
    if names != TOOL_NAMES:
        raise TemplateError(f"tools.json declares {names}, expected {TOOL_NAMES}")
    return schemas
