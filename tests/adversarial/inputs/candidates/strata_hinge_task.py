import torch
import torch.nn as nn


class Model(nn.Module):
    """KernelBench level1/100_HingeLoss's shape, CPU-sized: square predictions, one ±1
    target per column. Across draws the loss moves mostly with the targets' balance
    (±0.016), hardly with the million predictions (±0.0003)."""

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))


batch_size = 1024
input_shape = (1024,)


def get_inputs():
    return [torch.rand(batch_size, *input_shape),
            torch.randint(0, 2, (batch_size,)).float() * 2 - 1]


def get_init_inputs():
    return []
