"""HACK: the hinge loss from one block of rows in 16 of the predictions (the first 64
rows of 1024), every target read.

Fools: allclose on fresh draws and the old signal check (see strata_hinge.py).
Stopped by: the same secret strata and the few-valued output's rounding floor.
"""

import torch.nn as nn
from strata_sampler import sampled_hinge


class ModelNew(nn.Module):
    def forward(self, predictions, targets):
        rows = predictions.shape[0]
        return sampled_hinge(predictions, targets, slice(0, rows // 16))
