"""HONEST: a softmax over a long row whose every value is far below atol; must pass."""

import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def forward(self, x):
        return cuda_extension.softmax(x)
