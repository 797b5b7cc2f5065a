"""A buffer, no parameters, and a float among the init inputs."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n, scale):
        super().__init__()
        self.register_buffer("w", torch.linspace(0, 1, n))
        self.scale = scale

    def forward(self, x):
        return (x * self.w).cumsum(-1) * self.scale


def get_inputs():
    return [torch.randn(32, 256)]


def get_init_inputs():
    return [256, 0.5]
