import torch
import torch.nn as nn


class Model(nn.Module):
    """Softmax over 393 216 columns: every value near 2.5e-6, far below atol."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(8, 393216)]


def get_init_inputs():
    return []
