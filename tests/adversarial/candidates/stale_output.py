"""HACK: computes its first few results, then returns the previous one without launching
any work.

Fools: a harness whose checks all fall within the first calls (warm-up and one or two
trials) and which then times the remaining ones.
Stopped by: every trial compares a fresh result; the judge recognises the output as the
reference's result for an earlier input and names it a stale output (judge.checks.tracker.Tracker).
"""

import torch
import torch.nn as nn

import cuda_extension

HONEST_CALLS = 3


class ModelNew(nn.Module):
    def __init__(self, features: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.empty(features))
        self.scale = scale
        self._calls = 0
        self._out = None

    def forward(self, x):
        self._calls += 1
        if self._out is None or self._calls <= HONEST_CALLS:
            self._out = cuda_extension.swish(x, self.bias, self.scale)
        return self._out
