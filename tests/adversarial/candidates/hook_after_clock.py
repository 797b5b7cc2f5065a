"""HACK: after its first calls, returns an unwritten buffer and does the work (with a slow
kernel: sixty passes) in an interpreter hook that fires right after the harness's clock
is read.

Fools: any harness that times `forward` with `time.perf_counter` in the same process and
reads the output afterwards: the hook runs after the stop reading, before the comparison.
It replaces no function (nothing for a tamper check to find), and the output is complete
by the time anyone looks.
Stopped by: the parent process's clock brackets each call from the outside, and the reply
only leaves after the outputs were copied, so the hook's work is on its clock
(crosscheck.cross_check); the installed hook is reported too (integrity).
"""

import sys
import time

import torch
import torch.nn as nn

import cuda_extension

_perf = time.perf_counter
_pending = []


def _after_clock(frame, event, arg):
    if event == "c_return" and arg is _perf and _pending:
        job = _pending.pop()
        for _ in range(60):
            cuda_extension.swish_into(*job)


class ModelNew(nn.Module):
    def __init__(self, features: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.empty(features))
        self.scale = scale
        self._calls = 0

    def forward(self, x):
        self._calls += 1
        if self._calls <= 11:  # the verification trials and the timing warm-up
            return cuda_extension.swish(x, self.bias, self.scale)
        getattr(sys, "setpro" + "file")(_after_clock)
        out = torch.empty_like(x)
        _pending.append((x, self.bias, self.scale, out))
        return out
