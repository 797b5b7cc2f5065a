"""Progress of a run as `on_event(kind, data)` calls, so any front end can show it.

Kinds and their data (the live view in `cudaopt.cli.live` reads the same keys):
  "step"      {"step", "summary", "cost_usd", "elapsed_s"}   a model call is about to happen
  "message"   {"text", "role"}                 the model's words, or a nudge from cudaopt
  "tool"      {"name", "summary", "args", "output", "ok"}   one action and its result
  "judge"     {"text"}                         the loop's own judge calls (progress lines)
  "candidate" {"index", "verdict", "path", "trusted"}       a judged candidate appeared
  "best"      {"index", "verdict", "path"}     a new best, verified by cudaopt itself
  "done"      {"reason", "verdict", "meta", "run_dir"}      the final verdict (None if no best)
  "context"   {"budget", "caching"}            the model's context budget, once per session
  "usage"     {"step", "usage", "total", "request_tokens"}  what a model call was billed
  "compacted" {"before_step", "reason", "steps", ...}       the request was compacted
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

OnEvent = Callable[[str, dict[str, Any]], None]


def ignore(kind: str, data: dict[str, Any]) -> None:
    """An `on_event` for callers that do not watch."""


def describe(label: str, index: int | None, verdict: Any) -> str:
    """One line on a verdict, for people and for the model's nudges."""
    where = f" {index}" if index is not None else ""
    if not verdict.clean:
        detail = (verdict.violations or verdict.mismatch or [verdict.error])[0] or ""
        detail = _first_line(str(detail), 300)
        return f"{label}{where}: {verdict.status.value}" + (f" ({detail})" if detail else "")
    speed = verdict.speedup_vs_compile
    vs = f"{speed:.2f}x vs torch.compile" if speed is not None else "not timed"
    warm = (verdict.warm or {}).get("speedup_vs_compile")
    vs += f" (back to back: {warm:.2f}x)" if warm is not None else ""
    accepted = ", accepted" if verdict.accepted else ""
    return f"{label}{where}: correct, {vs}, reward {verdict.reward:g}{accepted}"


def _first_line(text: str, limit: int = 160) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"
