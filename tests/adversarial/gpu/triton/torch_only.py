"""Written with every operator allowed: PyTorch's own kernels only, none of its own (the
Triton import is there, its kernel never launched). Correct, and no speed milestone."""

import swish  # noqa: F401
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)
