import torch
import torch.nn as nn


class Model(nn.Module):
    """An output over the judge's check-at-once size (65 MiB of float32): the timed calls'
    outputs are compared call by call (see the judge's timing rounds)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.randn(2048, 8320)]


def get_init_inputs():
    return []
