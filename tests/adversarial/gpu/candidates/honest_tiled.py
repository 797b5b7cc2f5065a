"""HONEST: a tiled kernel on the current stream, its output from torch::empty. Must pass."""

import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return cuda_extension.matmul(a, b)
