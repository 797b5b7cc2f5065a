"""C = A @ B for square 4096 x 4096 float32 matrices: level-1 GEMM size."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


n = 4096


def get_inputs():
    return [torch.rand(n, n), torch.rand(n, n)]


def get_init_inputs():
    return []
