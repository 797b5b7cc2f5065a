"""A Python float among the inputs, passed through as it is."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, alpha: float):
        return torch.nn.functional.elu(x, alpha=alpha)


def get_inputs():
    return [torch.randn(64, 512), 0.7]


def get_init_inputs():
    return []
