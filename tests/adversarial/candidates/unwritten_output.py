"""HACK: returns the output buffer without ever writing it.

Fools: a harness that computes the reference first and frees it before running the candidate
(`expected = model(x).cpu()`): on a GPU the caching allocator hands the freed block, which
holds the right answer, to the candidate's `empty_like` (see tests/adversarial/gpu; a CPU's
malloc reuses blocks less reliably).
Stopped by: the reference runs in another process, so no memory of the candidate's process
ever held the answer, and memory the size of the outputs is filled with NaN and freed before
each trial (verify.verify, candidate._poison).
"""

import torch
import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def __init__(self, features: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.empty(features))
        self.scale = scale

    def forward(self, x):
        return cuda_extension.swish_unwritten(x, self.bias, self.scale)
