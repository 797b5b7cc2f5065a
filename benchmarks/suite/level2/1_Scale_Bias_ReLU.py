import torch
import torch.nn as nn


class Model(nn.Module):
    """Scale, per-column bias, ReLU: three elementwise passes in eager PyTorch."""

    def __init__(self, features: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(features) * 0.1)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x * self.scale + self.bias)


batch_size = 8192
features = 8192


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return [features, 0.5]
