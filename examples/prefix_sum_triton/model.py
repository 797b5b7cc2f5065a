import torch
import torch.nn as nn


class Model(nn.Module):
    """Running sums along each row, written as a product with an upper-triangular matrix of
    ones: y[r, j] = x[r, 0] + ... + x[r, j]. The reference builds the n x n matrix and
    multiplies, O(n^2) work per row where one pass, O(n), suffices; torch.compile still
    builds the matrix and calls the matrix product, so a Triton scan wins by a wide margin
    on any GPU."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[-1]
        return x @ torch.triu(torch.ones(n, n, dtype=x.dtype, device=x.device))


rows, n = 4096, 4096


def get_inputs():
    return [torch.randn(rows, n)]


def get_init_inputs():
    return []
