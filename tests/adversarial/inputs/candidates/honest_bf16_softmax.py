"""HONEST: a softmax over a long row written in bfloat16, every value within 0.4% of its
own size and far below atol; must pass."""

import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def forward(self, x):
        return cuda_extension.softmax_bf16(x)
