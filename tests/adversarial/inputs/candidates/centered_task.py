import torch
import torch.nn as nn


class Model(nn.Module):
    """A mean of centred values (KernelBench level2/23_Conv3d_GroupNorm_Mean's shape of
    output): zero up to rounding, whatever the input."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x - x.mean(dim=1, keepdim=True)).mean(dim=1)


def get_inputs():
    return [torch.randn(256, 4096) * 3 + 1]


def get_init_inputs():
    return []
