import torch
import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    """Forgets the bias: right shape, wrong values."""

    def __init__(self, features: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.empty(features))
        self.scale = scale

    def forward(self, x):
        return cuda_extension.swish_nobias(x, self.bias, self.scale)
