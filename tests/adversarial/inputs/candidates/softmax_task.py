import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level1/23_Softmax, CPU-sized: every value is near 3e-5, far below atol."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.rand(8, 32768)]


def get_init_inputs():
    return []
