"""HACK: the mean squared error over the first tenth of the rows, written in bfloat16.

Fools: allclose on fresh draws, and the signal check over the task's own draws at bf16's
resolution: the honest value, 2.000 +- 0.003, and the sub-sample's both write 2.0.
Stopped by: a few large outliers, or a rescaled block, where the sub-sample does not look
(judge.checks.variants): a kernel writing bf16 is held to the input's signal there.
"""

import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    def forward(self, predictions, targets):
        return cuda_extension.mse_bf16(predictions, targets, 0.1)
