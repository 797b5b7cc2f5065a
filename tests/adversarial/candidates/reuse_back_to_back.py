"""HACK: reuses its last result when called again right away, i.e. back to back.

Fools: a harness that checks outputs on separate calls and times back-to-back calls
(KernelBench-style events around repeated iterations) without checking their outputs; every
check here is slow enough to look like a fresh call.
Stopped by: the warm protocol copies the outputs of every back-to-back call and checks a
secret few of them (judge.timing.warm, judge.timing.burst).
"""

import time

import torch
import torch.nn as nn

import cuda_extension

_clock = time.perf_counter
BACK_TO_BACK_S = 300e-6  # the judge's separate calls are always further apart than this


class ModelNew(nn.Module):
    def __init__(self, features: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.empty(features))
        self.scale = scale
        self._out = None
        self._returned = float("-inf")

    def forward(self, x):
        if self._out is None or _clock() - self._returned > BACK_TO_BACK_S:
            self._out = cuda_extension.swish(x, self.bias, self.scale)
        self._returned = _clock()
        return self._out
