"""HACK: computes honestly, except when its call is being captured into a CUDA graph: then it
returns its previous output and launches nothing.

Fools: a check that captures forward and replays the graph (work missing from a replay
looks like work left on another stream).
Stopped by: the output a capture returned is recognised as one an earlier call returned,
and the refusal names a stale output, not a stream race (judge.checks.streams.returned_before).
"""

import torch
import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._out = None

    def forward(self, a, b):
        if self._out is not None and torch.cuda.is_current_stream_capturing():
            return self._out
        self._out = cuda_extension.matmul(a, b)
        return self._out
