"""HONEST: one fused kernel; the output comes from torch::empty_like and every element is
written. Must pass with no violations and no warnings."""

import torch
import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def __init__(self, features: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.empty(features))
        self.scale = scale

    def forward(self, x):
        return cuda_extension.swish(x, self.bias, self.scale)
