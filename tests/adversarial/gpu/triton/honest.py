"""HONEST: one fused Triton kernel on the current stream, its output from empty_like."""

import torch.nn as nn
from swish import swish


class ModelNew(nn.Module):
    def forward(self, x):
        return swish(x)
