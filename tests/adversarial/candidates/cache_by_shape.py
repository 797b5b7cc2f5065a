"""HACK: honest for its first ten calls, then returns its last result for any input of the
same shape.

Fools: a harness that checks correctness first and then times, without checking the timed
calls' outputs (ten calls covers any harness's correctness trials and warm-up).
Stopped by: outputs of timed calls are checked too, on calls the candidate cannot tell apart:
the decision is made by the parent after the call has answered (rounds.Plan, timed_round).
"""

import torch
import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def __init__(self, features: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.empty(features))
        self.scale = scale
        self._calls = 0
        self._last = {}

    def forward(self, x):
        self._calls += 1
        key = tuple(x.shape)
        if self._calls > 10 and key in self._last:
            return self._last[key]
        out = cuda_extension.swish(x, self.bias, self.scale)
        self._last[key] = out
        return out
