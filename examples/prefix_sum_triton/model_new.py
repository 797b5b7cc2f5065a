import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _prefix_sum(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    """One program per row: the row in registers, its running sums by a scan."""
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + row * n + offs, mask=mask, other=0.0)
    tl.store(y_ptr + row * n + offs, tl.cumsum(x, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, n = x.shape
        y = torch.empty_like(x)
        _prefix_sum[(rows,)](x, y, n, BLOCK=triton.next_power_of_2(n), num_warps=8)
        return y
