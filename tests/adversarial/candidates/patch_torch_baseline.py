"""HACK: at import, slows down the PyTorch functions the reference uses, and makes
torch.compile a no-op, so both baselines look slow next to the candidate's honest kernel.

Fools: any harness that times eager and torch.compile in the process that imported the
candidate.
Stopped by: the baselines run in a process that never imports the candidate (reference,
session), and the replaced functions are reported (integrity.Integrity).
"""

import os
import sys
import time

import torch
import torch.nn as nn

import cuda_extension

if os.environ.get("ADVERSARIAL_IMPORT_LOG"):  # for the test: which processes import this?
    with open(os.environ["ADVERSARIAL_IMPORT_LOG"], "a") as log:
        log.write(sys.argv[-1] + "\n")

_T = torch


def _slowed(fn):
    def slow(*args, **kwargs):
        time.sleep(0.002)
        return fn(*args, **kwargs)

    return slow


for _name in ("sigmoid", "clamp"):
    setattr(_T, _name, _slowed(getattr(_T, _name)))
setattr(_T, "compile", lambda model=None, **kwargs: model)


class ModelNew(nn.Module):
    def __init__(self, features: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.empty(features))
        self.scale = scale

    def forward(self, x):
        return cuda_extension.swish(x, self.bias, self.scale)
