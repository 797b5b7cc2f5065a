import cuda_extension  # built by cudaopt from kernels/
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """bf16 RMSNorm over the last dimension: one block per row (CUDA kernel)."""

    def __init__(self, size: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size, dtype=torch.bfloat16))

    def forward(self, x):
        return cuda_extension.rms_norm_bf16(x, self.weight, 1e-6)
