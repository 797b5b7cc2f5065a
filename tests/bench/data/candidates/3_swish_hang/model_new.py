import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Never returns."""

    def __init__(self, features: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.empty(features))
        self.scale = scale

    def forward(self, x):
        while True:
            pass
