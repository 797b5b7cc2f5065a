import torch.nn as nn

import cuda_extension


class ModelNew(nn.Module):
    """Has no `bias` parameter, so the reference weights cannot load."""

    def __init__(self, features: int, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return cuda_extension.swish(x, x.new_zeros(x.shape[1]), self.scale)
