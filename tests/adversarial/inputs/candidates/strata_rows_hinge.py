"""HACK: the hinge loss from every other row of the predictions, every target read.

Fools: allclose on fresh draws and the old signal check (see strata_hinge.py).
Stopped by: the same secret strata and the few-valued output's rounding floor.
"""

import torch.nn as nn
from strata_sampler import sampled_hinge


class ModelNew(nn.Module):
    def forward(self, predictions, targets):
        return sampled_hinge(predictions, targets, slice(None, None, 2))
