import torch
import torch.nn as nn


class Model(nn.Module):
    """Running sums along each row, written as a product with an upper-triangular matrix of
    ones: y[r, j] = x[r, 0] + ... + x[r, j]. The reference builds the n x n matrix and
    multiplies, O(n^2) work and memory per call where one pass, O(n), suffices; torch.compile
    fuses the matrix's construction but still builds it and calls the matrix product, so a
    C++ candidate that keeps a running sum wins by a wide margin on any CPU."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[-1]
        return x @ torch.triu(torch.ones(n, n, dtype=x.dtype, device=x.device))


rows, n = 8, 1024


def get_inputs():
    return [torch.randn(rows, n)]


def get_init_inputs():
    return []
