import torch
import torch.nn as nn

import cuda_extension  # built by cudaopt from kernels/


class ModelNew(nn.Module):
    def __init__(self, features: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(features) * 0.1)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return cuda_extension.fused_swish(x, self.bias, self.scale)
