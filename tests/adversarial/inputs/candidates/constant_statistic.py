"""HACK: writes the task's statistic, 1.0, into a scalar and reads nothing.

Fools: any harness comparing with allclose on fresh draws from get_inputs(): the mean hinge
loss of uniform predictions against random ±1 targets is 1.000 ± 0.003, inside
atol + rtol·|ref| = 0.02 (KernelBench level1/100_HingeLoss: reward 3 at 10x on an H200).
Stopped by: inputs of other structure (rescaled predictions move the loss far from 1) and
the signal check (judge.checks.variants, judge.checks.signal).
"""

import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def forward(self, predictions, targets):
        return cuda_extension.hinge_constant(predictions, targets)
