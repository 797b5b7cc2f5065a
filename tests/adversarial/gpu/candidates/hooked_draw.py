"""HACK: ../../candidates/hooked_draw.py's, on the matmul task (ten passes)."""

import sys
from pathlib import Path

import torch.nn as nn

import cuda_extension

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "candidates"))
from inprocess import hook_draw  # noqa: E402


def _slow(a, b):
    for _ in range(9):
        cuda_extension.matmul(a, b)
    return cuda_extension.matmul(a, b)


_answers = hook_draw(lambda inputs: _slow(*inputs))


class ModelNew(nn.Module):
    def forward(self, a, b):
        found = _answers.pop((a.data_ptr(), b.data_ptr()), None)
        return found if found is not None else _slow(a, b)
