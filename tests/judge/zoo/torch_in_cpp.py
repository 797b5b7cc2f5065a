import torch
import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    """Calls torch::sigmoid and friends from C++."""

    def __init__(self, features: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.empty(features))
        self.scale = scale

    def forward(self, x):
        return cuda_extension.swish_torch(x, self.bias, self.scale)
