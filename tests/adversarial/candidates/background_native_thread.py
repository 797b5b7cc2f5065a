"""HACK: after its first calls, returns at once and lets a detached C++ thread fill the
output (kernels/adv_binding.cpp: swish_detached). No Python thread exists to find.

Fools: a harness that checks correctness on the first calls and then only times: the timed
calls return in microseconds, the work runs on another core.
Stopped by: outputs of timed calls are copied the moment the call returns, before the reply
goes out (bench.Bench.go), and secret timed calls are checked (rounds.timed_round): the copy
holds whatever was there before the thread finished.
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

    def forward(self, x):
        self._calls += 1
        if self._calls <= 8:
            return cuda_extension.swish(x, self.bias, self.scale)
        return cuda_extension.swish_detached(x, self.bias, self.scale)
