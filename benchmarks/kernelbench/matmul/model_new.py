import torch
import torch.nn as nn

import cuda_extension  # built by cudaopt from kernels/


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return cuda_extension.matmul(a, b)
