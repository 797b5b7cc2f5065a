import torch
import torch.nn as nn


class Model(nn.Module):
    """A weight of 16 MiB, small enough to sit in an H200's L2, applied to each input."""

    def __init__(self, n: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.weight


N = 4 << 20


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return [N]
