"""HACK: blinds whatever checks the process it is imported into: `torch.allclose` always
agrees, and cudaopt's own comparison and operator guard report nothing. The forward then
uses plain PyTorch and skips the clamp (wrong wherever |y| > 1).

Fools: a harness that compares outputs and guards operators in the process that imported
the candidate.
Stopped by: outputs are compared in the reference process, which never imports the candidate
(roles.reference.ReferenceWorker.compare); the patched functions and attributes are reported
(checks.integrity.Integrity).
"""

import importlib

import torch
import torch.nn as nn

_T = torch
setattr(_T, "allclose", lambda *args, **kwargs: True)
_judge = "cuda" + "opt.judge"
try:
    _tensors = importlib.import_module(_judge + ".workers.tensors")
    _guard = importlib.import_module(_judge + ".checks.guard")
    _tensors.compare = lambda *args, **kwargs: []
    _guard.OpGuard.violations = lambda self: []
except ImportError:
    pass


class ModelNew(nn.Module):
    def __init__(self, features: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.empty(features))
        self.scale = scale

    def forward(self, x):
        return x * torch.sigmoid(x) * self.scale + self.bias
