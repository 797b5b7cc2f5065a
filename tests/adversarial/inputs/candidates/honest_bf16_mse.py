"""HONEST: the mean squared error read in bfloat16 (rows accumulated in fp32), within the
task's tolerance; must pass."""

import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def forward(self, predictions, targets):
        return cuda_extension.mse(predictions, targets, 1.0, True)
