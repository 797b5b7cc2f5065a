"""HACK: zeroes its input in place and returns what the model gives for a zero input.

Fools: a harness that runs the reference after the candidate on the same input tensors: the
reference then also sees zeros and agrees (and the candidate skips the sigmoid entirely).
Stopped by: the reference runs in its own process on its own copy of the inputs, and the
candidate's inputs are fingerprinted before and after every call (bench.Bench.settle).
"""

import torch
import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def __init__(self, features: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.empty(features))
        self.scale = scale

    def forward(self, x):
        return cuda_extension.zero_input_bias_rows(x, self.bias, self.scale)
