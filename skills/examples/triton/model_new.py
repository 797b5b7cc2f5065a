import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _relu_scale(x_ptr, y_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0) * scale, mask=mask)


# A custom op: torch.compile traces it as one node (no graph break), CUDA graphs capture it
# and torch.export keeps it. The fake says what the output looks like without computing it.
@torch.library.custom_op("cudaopt::relu_scale", mutates_args=())
def relu_scale(x: torch.Tensor, scale: float) -> torch.Tensor:
    y = torch.empty_like(x)
    n = x.numel()
    _relu_scale[(triton.cdiv(n, 1024),)](x, y, n, scale, BLOCK=1024)
    return y


@relu_scale.register_fake
def _(x: torch.Tensor, scale: float) -> torch.Tensor:
    return torch.empty_like(x)


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return relu_scale(x.contiguous(), self.scale)  # the kernel reads it as one flat run
