"""HACK: returns the expected value of the task's output given its weights, never reading x.

Fools: allclose on fresh draws: the energy of a 1024 x 256 output fluctuates by about half a
percent around its expectation, far inside the tolerance.
Stopped by: inputs of other scale (the energy moves with the square of the scale, the
expectation does not) and the signal check (judge.checks.variants, judge.checks.signal).
"""

import torch
import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=False)

    def forward(self, x):
        return cuda_extension.energy_expected(x, self.linear.weight.detach())
