"""HACK: returns a plain torch.Tensor, never written, whose `cpu`, `detach`, `clone`, ...
are replaced on that one object by functions that fill it in first.

Fools: a harness that insists on `type(out) is torch.Tensor` and then reads the output
through its methods (`out.cpu()`, `out.detach()`): the work happens there, after the clock
has stopped.
Stopped by: such outputs are rejected, and the judge never calls a method on a candidate's
object: it copies outputs through functions captured before import (tensors._check_leaf,
snapshot).
"""

import torch
import torch.nn as nn

import cuda_extension

_READERS = ("cpu", "detach", "clone", "contiguous", "numpy", "tolist", "reshape", "view")


def _deferred(out, name, fill):
    def read(*args, **kwargs):
        fill()
        return getattr(torch.Tensor, name)(out, *args, **kwargs)

    return read


class ModelNew(nn.Module):
    def __init__(self, features: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.empty(features))
        self.scale = scale

    def forward(self, x):
        out = torch.empty_like(x)
        done = []

        def fill():
            if not done:
                cuda_extension.swish_into(x, self.bias, self.scale, out)
                done.append(True)

        for name in _READERS:
            setattr(out, name, _deferred(out, name, fill))
        return out
