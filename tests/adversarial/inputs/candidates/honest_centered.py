"""HONEST: each row's mean deviation from its mean, computed in double: zero up to
rounding, as the float32 reference is, but rounded otherwise; must pass."""

import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def forward(self, x):
        return cuda_extension.centered_mean(x)
