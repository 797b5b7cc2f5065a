import torch
import torch.nn as nn


class Model(nn.Module):
    """Swish, scale, bias and clamp: four elementwise passes in eager PyTorch."""

    def __init__(self, features: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(features) * 0.1)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x * torch.sigmoid(x)
        y = y * self.scale + self.bias
        return torch.clamp(y, -1.0, 1.0)


batch_size = 2
features = 256


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return [features, 0.75]
