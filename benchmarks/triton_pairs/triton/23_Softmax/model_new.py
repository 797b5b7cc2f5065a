"""Triton candidate for KernelBench level1/23_Softmax: softmax over rows of 393 216 floats.

A row (1.5 MiB) fits in no program's registers, so one program per row streams it twice:
first an online max and sum (each chunk's max rescales the running sum, so exp never
overflows: the row max is subtracted, as torch does), then exp(x - max) / sum stored.
Accumulation is in float32. Offsets are 64-bit (4096 x 393216 = 1.6e9 elements).
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK = 4096


@triton.jit
def _softmax_rows(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_cols
    y_row = y_ptr + row * n_cols
    cols = tl.arange(0, BLOCK)
    m = tl.full((), float("-inf"), tl.float32)
    s = tl.full((), 0.0, tl.float32)
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        shift = tl.where(m_new == float("-inf"), 0.0, m_new)  # a row of -inf so far: no NaN
        s = s * tl.exp(m - shift) + tl.sum(tl.exp(x - shift), axis=0)
        m = m_new
    shift = tl.where(m == float("-inf"), 0.0, m)
    inv = 1.0 / s
    for start in range(0, n_cols, BLOCK):
        mask = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(y_row + start + cols, tl.exp(x - shift) * inv, mask=mask)


@torch.library.custom_op("cudaopt::tp_softmax_triton", mutates_args=())
def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    """Softmax along dim 1 of a contiguous 2-D tensor, one program per row."""
    if x.dim() != 2 or not x.is_contiguous():
        raise ValueError("softmax_rows: x must be a contiguous 2-D tensor")
    y = torch.empty_like(x)
    rows, cols = x.shape
    _softmax_rows[(rows,)](x, y, cols, BLOCK=BLOCK, num_warps=8)
    return y


softmax_rows.register_fake(lambda x: torch.empty_like(x))


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softmax_rows(x)
