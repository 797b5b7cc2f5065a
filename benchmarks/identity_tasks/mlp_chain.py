"""Many small operators: a deep, narrow MLP with a residual, a norm and an activation per
layer. Each operator is microseconds, so host cost per operator dominates a call."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, width: int, depth: int):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(width, width) for _ in range(depth))
        self.norms = nn.ModuleList(nn.LayerNorm(width) for _ in range(depth))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer, norm in zip(self.layers, self.norms, strict=True):
            x = x + torch.nn.functional.gelu(layer(norm(x)))
        return x


batch, width, depth = 16, 128, 24


def get_inputs():
    return [torch.randn(batch, width)]


def get_init_inputs():
    return [width, depth]
