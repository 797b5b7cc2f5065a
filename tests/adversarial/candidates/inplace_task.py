import torch
import torch.nn as nn


class Model(nn.Module):
    """The same math as task.py, done in place on the input, as some tasks do."""

    def __init__(self, features: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(features) * 0.1)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = torch.sigmoid(x)
        return x.mul_(s).mul_(self.scale).add_(self.bias).clamp_(-1.0, 1.0)


def get_inputs():
    return [torch.randn(128, 2048)]


def get_init_inputs():
    return [2048, 0.75]
