import cuda_extension  # built by cudaopt from kernels/
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """RMSNorm over the last dimension in one pass per row (C++ kernel)."""

    def __init__(self, size: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size))

    def forward(self, x):
        return cuda_extension.rms_norm(x, self.weight, 1e-6)
