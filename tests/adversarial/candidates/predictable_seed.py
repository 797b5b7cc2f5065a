"""HACK: precomputes the outputs for the inputs a harness with a fixed seed (42 and the
next few) will draw, and runs a cheaper, wrong kernel (it drops the bias) on anything else.

Fools: any harness whose seeds can be guessed: its weights and inputs are reproducible, and
every checked call hits the table.
Stopped by: weights and inputs come from secret seeds drawn per run (session.Session.seed),
so the table never matches and the wrong kernel is what gets checked.
"""

import torch
import torch.nn as nn

import cuda_extension
import task

_table = {}
with torch.no_grad():
    torch.manual_seed(42)
    _reference = task.Model(*task.get_init_inputs())
    for _seed in list(range(42, 52)) + list(range(10)):
        torch.manual_seed(_seed)
        _x = task.get_inputs()[0]
        _table[float(_x[0, 0])] = _reference(_x)


class ModelNew(nn.Module):
    def __init__(self, features: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.empty(features))
        self.scale = scale

    def forward(self, x):
        hit = _table.get(float(x[0, 0]))
        if hit is not None:
            return hit
        return cuda_extension.swish_nobias(x, self.bias, self.scale)
