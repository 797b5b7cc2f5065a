"""HONEST (for inplace_task.py): the task's Model writes its result into its input, and so
does this kernel. Modifying inputs breaks the rules only where the reference does not do it
itself. Must pass."""

import torch
import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def __init__(self, features: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.empty(features))
        self.scale = scale

    def forward(self, x):
        cuda_extension.swish_into(x, self.bias, self.scale, x)
        return x
