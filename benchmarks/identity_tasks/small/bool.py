"""A boolean output."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        return x > y


def get_inputs():
    return [torch.randn(64, 512), torch.randn(64, 512)]


def get_init_inputs():
    return []
