import torch
import torch.nn as nn


class Model(nn.Module):
    """(A @ B) @ V: a cubic matrix product where two quadratic ones would do. Neither eager
    nor torch.compile re-associates it, so a C++ candidate that computes A @ (B @ V) is
    reliably faster on any CPU: a small task for exercising the whole loop."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return (a @ b) @ v


n, k = 512, 4


def get_inputs():
    return [torch.randn(n, n), torch.randn(n, n), torch.randn(n, k)]


def get_init_inputs():
    return []
