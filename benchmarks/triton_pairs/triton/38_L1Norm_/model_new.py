"""Triton candidate for KernelBench level1/38_L1Norm_: x / mean(|x| over dim 1).

One program per row of 65 535 floats (256 KiB: more than a program's registers hold), in
two passes: the sum of |x| in float32, then x divided by sum / n (a division, as the
reference does, so a row of zeros gives NaN as it does). The second read of a row follows
the first closely, so much of it comes from L2. Offsets are 64-bit.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK = 4096


@triton.jit
def _l1_norm_rows(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_cols
    y_row = y_ptr + row * n_cols
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n_cols, BLOCK):
        x = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=0.0)
        acc += tl.abs(x.to(tl.float32))
    mean = tl.sum(acc, axis=0) / n_cols
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_row + start + cols, x / mean, mask=mask)


@torch.library.custom_op("cudaopt::tp_l1_norm_triton", mutates_args=())
def l1_norm_rows(x: torch.Tensor) -> torch.Tensor:
    """L1-normalised along dim 1 of a contiguous 2-D tensor, one program per row."""
    if x.dim() != 2 or not x.is_contiguous():
        raise ValueError("l1_norm_rows: x must be a contiguous 2-D tensor")
    y = torch.empty_like(x)
    rows, cols = x.shape
    _l1_norm_rows[(rows,)](x, y, cols, BLOCK=BLOCK, num_warps=8)
    return y


l1_norm_rows.register_fake(lambda x: torch.empty_like(x))


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return l1_norm_rows(x)
