"""ReLU over a 4096 x 393216 float32 tensor: level-1 elementwise size (6.4 GB in, 6.4 GB out)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


batch_size = 4096
dim = 393216


def get_inputs():
    return [torch.rand(batch_size, dim) * 2 - 1]


def get_init_inputs():
    return []
