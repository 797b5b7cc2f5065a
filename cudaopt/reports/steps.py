"""Tokens and cost per step, read back from a run's trajectory (its "usage" and
"compacted" notes), for `cudaopt show` and its JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.table import Table

COLUMNS = ("step", "tokens in", "cached", "out", "cost", "context")


def step_usage(run_dir: Path) -> list[dict[str, Any]]:
    """One entry per billed step: its usage note, and the compaction sent with it if any."""
    path = run_dir / "trajectory.jsonl"
    if not path.is_file():
        return []
    steps: list[dict[str, Any]] = []
    compacted: dict[int, dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:  # a line cut short by a hard kill
            continue
        if entry.get("note") == "compacted":
            compacted[int(entry.get("before_step", entry.get("step", 0)))] = entry
        elif entry.get("note") == "usage":
            keep = ("step", "prompt_tokens", "cached_tokens", "completion_tokens", "cost_usd",
                    "request_tokens")
            steps.append({key: entry.get(key) for key in keep})
    for step in steps:
        found = compacted.get(step["step"])
        step["compacted"] = found and {"steps": found.get("steps"),
                                       "reason": found.get("reason")}
    return steps


def steps_table(steps: list[dict[str, Any]]) -> Table:
    """Readable at 80 columns: tokens with thousands separators, cost to 1/100 cent."""
    table = Table(*COLUMNS, title="tokens and cost per step", title_justify="left")
    for step in steps:
        compacted = step.get("compacted")
        note = (f"compacted {compacted['steps'][0]}-{compacted['steps'][1]}"
                if compacted else "")
        table.add_row(str(step["step"]), f"{step['prompt_tokens'] or 0:,}",
                      f"{step['cached_tokens'] or 0:,}", f"{step['completion_tokens'] or 0:,}",
                      f"${step['cost_usd'] or 0:.4f}", note)
    return table
