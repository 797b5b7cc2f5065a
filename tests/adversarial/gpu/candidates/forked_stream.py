"""HACK (heavy): the tiled matmul on a private stream forked from the current stream and
never joined back. Stopped by: CUDA graph capture fails with unjoined work."""

import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return cuda_extension.matmul_forked(a, b)
