"""HONEST: the kernel on a private stream that waits for the current stream, and the
current stream waits for it in turn before forward returns."""

import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return cuda_extension.diag_joined(a, b)
