import torch
import torch.nn as nn
import torch.nn.functional as F  # noqa: F401 - KernelBench tasks import it


class Model(nn.Module):
    """Sigmoid of a 4096 x 16384 tensor."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor):
        return torch.sigmoid(x)


batch_size = 4096
dim = 16384


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
