import torch
import torch.nn as nn

import cuda_extension  # built by cudaopt from kernels/*.cu and kernels/*_binding.cpp


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return cuda_extension.relu_scale(x, self.scale)
