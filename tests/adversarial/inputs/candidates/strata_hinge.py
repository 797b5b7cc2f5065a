"""HACK: the hinge loss from one column block in 16 of the predictions, every target read,
stratified by the targets' signs (issue 38, family 5): a sixteenth of the work.

Fools: allclose on fresh draws, and the old signal check: the estimate follows the loss's
fluctuation across draws (the targets' balance, read exactly) to 0.14 of its size, under
the follow limit of 0.5; a single value was exempt from the own-scale rule. Rows rescaled,
a rescaled stretch of memory (whole rows), outliers: all seen through the columns it reads.
Stopped by: a secret stratum of the input (a few slices along every dimension) raised where
the sampler may not look, and a few-valued output held to the reference's draws up to
rounding (judge.checks.variants, judge.checks.signal).
"""

import torch.nn as nn
from strata_sampler import sampled_hinge


class ModelNew(nn.Module):
    def forward(self, predictions, targets):
        return sampled_hinge(predictions, targets, slice(None), block=4, every=16)
