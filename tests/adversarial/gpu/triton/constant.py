"""HACK: a Triton kernel that writes zeros: every softmax value over 393 216 columns is far
below atol, so zeros pass allclose on every fresh draw. Stopped by: the signal check (the
output must follow the input the way the reference's does)."""

import torch.nn as nn
from swish import fill


class ModelNew(nn.Module):
    def forward(self, x):
        return fill(x, 0.0)
