"""The origin header of an extracted task: where it came from, for `swap` and `check-model`.

One comment line holds it as JSON, so the task file stays a plain KernelBench task:

    # cudaopt-origin: {"entry": ..., "paths": [...], "inputs": [...], "state": {...}}
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch

MARK = "# cudaopt-origin: "


def state_spec(module: torch.nn.Module) -> dict[str, list[Any]]:
    """Parameter and buffer names with their shapes and dtypes."""
    return {k: [list(v.shape), str(v.dtype).removeprefix("torch.")]
            for k, v in module.state_dict().items()}


def header_line(origin: dict[str, Any]) -> str:
    return MARK + json.dumps(origin, separators=(",", ":")) + "\n"


def read_origin(task: Path) -> dict[str, Any] | None:
    """The origin recorded in `task`, or None for a task not made by `extract`."""
    try:
        with open(task, encoding="utf-8") as f:
            for _, line in zip(range(40), f, strict=False):
                if line.startswith(MARK):
                    return json.loads(line[len(MARK):])
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return None
