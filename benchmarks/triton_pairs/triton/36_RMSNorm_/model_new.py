"""Triton candidate for KernelBench level1/36_RMSNorm_: x / sqrt(mean(x^2 over dim 1) + eps).

The input is (112, 64, 512, 512): 64 features, each a plane of 262 144 floats apart. A
program takes a tile of all 64 features by a run of contiguous positions, so each feature's
row loads coalesced, the tile stays in registers between the sum of squares and the
store, and the 7.5 GiB input is read once (the reference reads it three times). Wider
feature counts fall back to two passes over chunks of features. Sums are in float32;
offsets are 64-bit.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

TILE = 8192  # elements per program: 64 registers a thread at 4 warps
MAX_ONE_PASS = 128  # features held in registers at once; more take two passes


@triton.jit
def _rms_norm(x_ptr, y_ptr, C, S, n_blocks, eps, C_BLOCK: tl.constexpr,
              BLOCK_S: tl.constexpr, ONE_PASS: tl.constexpr):
    pid = tl.program_id(0)
    b = (pid // n_blocks).to(tl.int64)
    pos = (pid % n_blocks).to(tl.int64) * BLOCK_S + tl.arange(0, BLOCK_S)
    chans = tl.arange(0, C_BLOCK)
    base = b * C * S + pos[None, :]
    pos_ok = (pos < S)[None, :]
    if ONE_PASS:
        offs = base + chans[:, None].to(tl.int64) * S
        mask = (chans[:, None] < C) & pos_ok
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        rms = tl.sqrt(tl.sum(x * x, axis=0) / C + eps)
        tl.store(y_ptr + offs, x / rms[None, :], mask=mask)
    else:
        acc = tl.zeros((BLOCK_S,), tl.float32)
        for c0 in range(0, C, C_BLOCK):
            c = c0 + chans[:, None]
            x = tl.load(x_ptr + base + c.to(tl.int64) * S, mask=(c < C) & pos_ok, other=0.0)
            x = x.to(tl.float32)
            acc += tl.sum(x * x, axis=0)
        rms = tl.sqrt(acc / C + eps)
        for c0 in range(0, C, C_BLOCK):
            c = c0 + chans[:, None]
            offs = base + c.to(tl.int64) * S
            mask = (c < C) & pos_ok
            x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
            tl.store(y_ptr + offs, x / rms[None, :], mask=mask)


@torch.library.custom_op("cudaopt::tp_rms_norm_triton", mutates_args=())
def rms_norm(x: torch.Tensor, eps: float) -> torch.Tensor:
    """Normalised over dim 1 of a contiguous (B, C, ...) tensor."""
    if x.dim() < 2 or not x.is_contiguous():
        raise ValueError("rms_norm: x must be a contiguous tensor of 2 or more dimensions")
    y = torch.empty_like(x)
    batch, chans = x.shape[0], x.shape[1]
    plane = x.numel() // max(batch * chans, 1)
    one_pass = triton.next_power_of_2(chans) <= MAX_ONE_PASS
    c_block = triton.next_power_of_2(chans) if one_pass else 32
    block_s = min(max(TILE // c_block, 16), triton.next_power_of_2(plane))
    n_blocks = triton.cdiv(plane, block_s)
    if y.numel():
        _rms_norm[(batch * n_blocks,)](x, y, chans, plane, n_blocks, eps, C_BLOCK=c_block,
                                       BLOCK_S=block_s, ONE_PASS=one_pass, num_warps=4)
    return y


rms_norm.register_fake(lambda x, eps: torch.empty_like(x))


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.num_features = num_features
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return rms_norm(x, self.eps)
