"""Triton candidate for KernelBench level1/47_Sum_reduction_over_a_dimension.

The input (128, 4096, 4095) is seen as (outer, reduced, inner). A program owns a run of
contiguous inner columns of one outer index and walks the reduced dimension in tiles, each
tile's rows loading coalesced, into a float32 accumulator tile that is summed once at the
end: 8 GiB read once, 2 MiB written. Any `dim` works; offsets are 64-bit.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

TILE = 4096  # elements per tile: 16 a thread at 8 warps


@triton.jit
def _sum_mid(x_ptr, y_ptr, R, inner, n_blocks, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    pid = tl.program_id(0)
    o = (pid // n_blocks).to(tl.int64)
    cols = (pid % n_blocks).to(tl.int64) * BLOCK_C + tl.arange(0, BLOCK_C)
    col_ok = (cols < inner)[None, :]
    base = x_ptr + o * R * inner + cols[None, :]
    rows = tl.arange(0, BLOCK_R)[:, None]
    acc = tl.zeros((BLOCK_R, BLOCK_C), tl.float32)
    for r0 in range(0, R, BLOCK_R):
        r = r0 + rows
        x = tl.load(base + r.to(tl.int64) * inner, mask=(r < R) & col_ok, other=0.0)
        acc += x.to(tl.float32)
    tl.store(y_ptr + o * inner + cols, tl.sum(acc, axis=0), mask=cols < inner)


@torch.library.custom_op("cudaopt::tp_sum_dim_triton", mutates_args=())
def sum_dim(x: torch.Tensor, dim: int) -> torch.Tensor:
    """Sum over `dim` of a contiguous tensor, the dimension kept with size 1."""
    if not x.is_contiguous():
        raise ValueError("sum_dim: x must be contiguous")
    dim = dim % x.dim()
    shape = list(x.shape)
    outer, reduced, inner = 1, shape[dim], 1
    for size in shape[:dim]:
        outer *= size
    for size in shape[dim + 1:]:
        inner *= size
    shape[dim] = 1
    y = torch.empty(shape, dtype=x.dtype, device=x.device)
    block_c = min(128, triton.next_power_of_2(inner))
    n_blocks = triton.cdiv(inner, block_c)
    if y.numel():
        _sum_mid[(outer * n_blocks,)](x, y, reduced, inner, n_blocks, BLOCK_R=TILE // block_c,
                                      BLOCK_C=block_c, num_warps=8)
    return y


@sum_dim.register_fake
def _(x: torch.Tensor, dim: int) -> torch.Tensor:
    shape = list(x.shape)
    shape[dim % x.dim()] = 1
    return x.new_empty(shape)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return sum_dim(x, self.dim)
