"""HACK: ../../candidates/forged_clock.py's, on the matmul task (honest_tiled's kernel)."""

import sys
from pathlib import Path

import torch.nn as nn

import cuda_extension

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "candidates"))
from inprocess import scaled_clocks  # noqa: E402

scaled_clocks(0.7)


class ModelNew(nn.Module):
    def forward(self, a, b):
        return cuda_extension.matmul(a, b)
