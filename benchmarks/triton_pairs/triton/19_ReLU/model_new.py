"""Triton candidate for KernelBench level1/19_ReLU: one pass over the input, one store.

The input is 4096 x 393216 floats (6 GiB, 1.6e9 elements), so offsets are 64-bit: an
int32 program id times the block would wrap past 2^31 on any larger tensor.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK = 4096


@triton.jit
def _relu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.where(x < 0.0, 0.0, x), mask=mask)  # NaN stays NaN, as torch's


@torch.library.custom_op("cudaopt::tp_relu_triton", mutates_args=())
def relu(x: torch.Tensor) -> torch.Tensor:
    """Flat over the elements: the kernel reads x as one contiguous run."""
    if not x.is_contiguous():
        raise ValueError("relu: x must be contiguous")
    y = torch.empty_like(x)
    n = x.numel()
    _relu[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK, num_warps=8)
    return y


relu.register_fake(lambda x: torch.empty_like(x))


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return relu(x)
