"""HONEST: the kernel on the legacy default stream (no stream named at the launch), as
many KernelBench solutions do; ordered with torch's default stream. Graph capture cannot
take it (the judge captures on a blocking stream), so the snapshot check runs and passes."""

import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return cuda_extension.diag_legacy(a, b)
