"""Triton candidate for KernelBench level1/88_MinGPTNewGelu: the tanh-GELU chain in one pass.

0.5 * (1 + tanh(u)) equals sigmoid(2u) exactly, so the kernel computes x * sigmoid(2u)
with u = sqrt(2/pi) * (x + 0.044715 x^3): the same function, one exp instead of a tanh,
and it saturates cleanly (x -> -inf gives -0, x -> +inf gives x). The reference makes
five passes over 256 MiB (pow, mul, add, tanh, mul...); this makes one read and one write.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK = 4096


@triton.jit
def _gelu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    u = 0.7978845608028654 * (x + 0.044715 * x * x * x)  # sqrt(2 / pi)
    tl.store(y_ptr + offs, x * tl.sigmoid(2.0 * u), mask=mask)


@torch.library.custom_op("cudaopt::tp_new_gelu_triton", mutates_args=())
def new_gelu(x: torch.Tensor) -> torch.Tensor:
    """Flat over the elements: the kernel reads x as one contiguous run."""
    if not x.is_contiguous():
        raise ValueError("new_gelu: x must be contiguous")
    y = torch.empty_like(x)
    n = x.numel()
    _gelu[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK, num_warps=8)
    return y


new_gelu.register_fake(lambda x: torch.empty_like(x))


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return new_gelu(x)
