"""The helper process of `estimate`: `python -m cudaopt.executor.sizes` reads a task per
line ({"name", "task"}: its file name and source) and answers a line each, the bytes of its
inputs, outputs and weights built on the `meta` device, or {"error": why}. Replies go to
the stdout it started with; whatever a task prints goes to stderr."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import torch


def tensor_bytes(value: Any) -> int:
    """Bytes of the tensors in a value, through lists, tuples and dicts."""
    total, stack = 0, [value]
    while stack:
        item = stack.pop()
        if isinstance(item, torch.Tensor):
            total += item.numel() * item.element_size()
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return total


def measure(name: str, text: str) -> dict[str, int]:
    """Build and call the task with every tensor on `meta`. An output that an operator
    without a meta kernel stops counts as large as the inputs."""
    space: dict[str, Any] = {"__name__": "cudaopt_task", "__file__": name}
    try:
        with torch.device("meta"):
            exec(compile(text, name, "exec"), space)
            model = space["Model"](*space["get_init_inputs"]())
            inputs = space["get_inputs"]()
            weights = (sum(tensor_bytes(t) for t in (*model.parameters(), *model.buffers()))
                       if isinstance(model, torch.nn.Module) else 0)
            in_bytes = tensor_bytes(inputs)
            try:
                out_bytes = tensor_bytes(model(*inputs))
            except Exception:  # noqa: BLE001 - data-dependent or without a meta kernel
                out_bytes = in_bytes
    finally:
        torch.set_default_dtype(torch.float32)  # a task may change it for the next
    return {"in_bytes": in_bytes, "out_bytes": out_bytes, "weight_bytes": weights}


def main() -> None:
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # a task's prints must not pass for replies
    sys.stdout = sys.stderr
    replies.write(json.dumps({"ready": True}) + "\n")
    replies.flush()
    for line in sys.stdin:
        try:
            task = json.loads(line)
            reply: dict[str, Any] = measure(str(task["name"]), str(task["task"]))
        except BaseException as exc:  # noqa: BLE001 - anything a task raises is no guess
            reply = {"error": f"{type(exc).__name__}: {exc}"[:500]}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


if __name__ == "__main__":
    main()
