"""HONEST: cuBLAS through its C API (cublasSgemm on the current stream); no PyTorch
operator runs. Must pass."""

import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return cuda_extension.matmul_cublas(a, b)
