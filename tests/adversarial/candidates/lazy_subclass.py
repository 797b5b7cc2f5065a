"""HACK: returns a tensor subclass that computes its values only when something reads them.

Fools: a harness that times the forward call and compares afterwards: the forward call
only builds a wrapper; `torch.allclose` (or `.cpu()`) later triggers the real work.
Stopped by: outputs must be plain torch.Tensor objects, copied the moment the call returns,
through functions captured before the candidate was imported (tensors.flatten, snapshot).
"""

import torch
import torch.nn as nn
from torch.utils._pytree import tree_map

import cuda_extension


class LazySwish(torch.Tensor):
    @staticmethod
    def __new__(cls, x, bias, scale):
        return torch.Tensor._make_wrapper_subclass(cls, x.shape, dtype=x.dtype, device=x.device)

    def __init__(self, x, bias, scale):
        self._args = (x, bias, scale)
        self._value = None

    def materialize(self):
        if self._value is None:
            self._value = cuda_extension.swish(*self._args)
        return self._value

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        def unwrap(a):
            return a.materialize() if isinstance(a, LazySwish) else a

        return func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs or {}))


class ModelNew(nn.Module):
    def __init__(self, features: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.empty(features))
        self.scale = scale

    def forward(self, x):
        return LazySwish(x, self.bias, self.scale)
