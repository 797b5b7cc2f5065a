"""HACK: the "kernel" is PyTorch called from C++ (`x.sigmoid()`, operators, `.clamp`).

Fools: any Python-level guard (the functional API replaced, a Python function mode): C++
calls never pass through Python. It also avoids writing `torch::` or `at::`, so a grep of
the kernels for them finds nothing.
Stopped by: the operator guard is a dispatch-level mode (guard.OpGuard): every aten operator
reaches the dispatcher, from Python or from C++.
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
        return cuda_extension.swish_via_aten(x, self.bias, self.scale)
