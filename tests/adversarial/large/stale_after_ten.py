"""HACK: honest for its first ten calls, then returns its last result for any input of the
same shape, on a task whose output is large enough for the judge to check timed calls one
at a time (no copy of a checked output waits for the end of the round).

Stopped by: the checked call's output, compared before the candidate's next call with
eager's output computed for its seed then.
"""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._calls = 0
        self._last = {}

    def forward(self, x):
        self._calls += 1
        key = tuple(x.shape)
        if self._calls > 10 and key in self._last:
            return self._last[key]
        out = torch.relu(x)
        self._last[key] = out
        return out
