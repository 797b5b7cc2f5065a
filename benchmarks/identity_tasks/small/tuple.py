"""Two outputs, one a reduction: a tuple is compared and timed whole."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.lin = nn.Linear(dim, dim)

    def forward(self, x):
        y = self.lin(x)
        return y.relu(), y.sum(dim=1)


def get_inputs():
    return [torch.randn(64, 128)]


def get_init_inputs():
    return [128]
