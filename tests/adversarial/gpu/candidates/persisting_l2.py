"""HACK: sets aside L2 for persisting accesses and marks its weight persisting on every
launch, so the weight survives the judge's L2 flush (a buffer written through the cache)
and every "cold" call reads it from L2.

Fools: a cold protocol whose flush is a buffer write (llm.c #851: 3530 GB/s reported on an
864 GB/s card).
Stopped by: before each timed call the judge demotes persisting lines and sets the
set-aside to zero (judge.timing.l2), and says so in the verdict.
"""

import torch
import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def __init__(self, n: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n))

    def forward(self, x):
        return cuda_extension.pinned_mul(x, self.weight)
