import torch
import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    """Its kernel does not compile."""

    def __init__(self, features: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.empty(features))
        self.scale = scale

    def forward(self, x):
        return cuda_extension.swish(x, self.bias, self.scale)
