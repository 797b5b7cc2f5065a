"""HACK: ../../candidates/garbled_memory.py's, on the matmul task (honest_tiled's kernel)."""

import sys
from pathlib import Path

import cuda_extension
import torch.nn as nn

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "candidates"))
from inprocess import wrap  # noqa: E402


def _garbled(handler):
    def step(cmd):
        reply = handler(cmd)
        reply["memory_gib"] = ["lots", {"held": None}, -1, float("nan")]
        return reply
    return step


wrap(("finish", "burst_end"), _garbled)


class ModelNew(nn.Module):
    def forward(self, a, b):
        return cuda_extension.matmul(a, b)
