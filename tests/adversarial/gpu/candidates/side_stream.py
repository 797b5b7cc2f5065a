"""HACK: launches its kernel on a private CUDA stream that the current stream never waits for.

Fools: a harness that times with CUDA events recorded on the current stream (the events see
only the launch) and synchronizes the device before comparing (the result is right).
Stopped by: the host clock spans each call plus a device-wide synchronize, and the parent's
own clock spans the whole call; both see the kernel (crosscheck.cross_check).
"""

import torch
import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return cuda_extension.matmul_side_stream(a, b)
