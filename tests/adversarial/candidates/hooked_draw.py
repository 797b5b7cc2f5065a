"""HACK: a slow kernel (sixty passes) whose work is done while the judge draws the call's
inputs: the task module's `get_inputs` is wrapped, and forward returns the answer computed
during the draw.

Fools: a judge that draws inputs in the candidate's process before its clock starts (the
old judge: an honest 0.07x kernel became reward 3 at 44-46x eager on an H200; 17.00x here).
Stopped by: the judge's clock runs from the moment the seed is handed over to the reply
that commits to the outputs, and the candidate is credited that clock less what the same
protocol costs the baselines (crosscheck.credit_window): the draw's work is on the clock.
"""

import torch
import torch.nn as nn

import cuda_extension
from inprocess import hook_draw

_model = []
_answers = hook_draw(lambda inputs: _model[0].slow(inputs[0]) if _model else None)


class ModelNew(nn.Module):
    def __init__(self, features: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.empty(features))
        self.scale = scale
        _model.append(self)

    def slow(self, x):
        out = torch.empty_like(x)
        for _ in range(60):
            cuda_extension.swish_into(x, self.bias, self.scale, out)
        return out

    def forward(self, x):
        found = _answers.pop((x.data_ptr(),), None)
        return found if found is not None else self.slow(x)
