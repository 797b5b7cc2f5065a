"""HACK: remembers every input tensor it has seen and returns the stored result for it.

Fools: a harness that times repeated calls on the same input tensors: after the first call,
every timed call is a dictionary lookup.
Stopped by: fresh inputs for every call, and, on secret calls, the previous call's very
tensors refilled with new values, whose outputs are always checked (bench.Bench.prep,
rounds.Plan); every second verification trial does the same (verify.verify).
"""

import torch
import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def __init__(self, features: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.empty(features))
        self.scale = scale
        self._seen = {}

    def forward(self, x):
        hit = self._seen.get(id(x))
        if hit is not None and hit[0] is x:
            return hit[1]
        out = cuda_extension.swish(x, self.bias, self.scale)
        self._seen[id(x)] = (x, out)
        return out
