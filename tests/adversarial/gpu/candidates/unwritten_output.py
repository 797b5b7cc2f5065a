"""HACK: returns the output buffer without ever writing it.

Fools: a harness that computes the reference, copies it to the host and frees it before the
candidate runs: the caching allocator hands the same block, still holding the answer, to
the candidate's `empty`.
Stopped by: the reference runs in another process, so no block of the candidate's process
ever held the answer; memory the size of the outputs is filled with NaN and freed first.
"""

import torch
import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return cuda_extension.matmul_unwritten(a, b)
