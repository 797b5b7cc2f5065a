import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Plain PyTorch in forward: correct, but not a kernel."""

    def __init__(self, features: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.empty(features))
        self.scale = scale

    def forward(self, x):
        return torch.clamp(x * torch.sigmoid(x) * self.scale + self.bias, -1.0, 1.0)
