import torch
import torch.nn as nn


class Model(nn.Module):
    """Mean squared error over a million independent elements: 2.000 ± 0.003."""

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean((predictions - targets) ** 2)


def get_inputs():
    return [torch.randn(512, 2048), torch.randn(512, 2048)]


def get_init_inputs():
    return []
