"""HONEST: the kernel on the current stream."""

import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return cuda_extension.diag_current(a, b)
