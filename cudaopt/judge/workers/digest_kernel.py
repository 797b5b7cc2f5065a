"""The digest's chain (see `digest`) in one Triton kernel, for large outputs on a GPU.

As tensor operations, each row of the chain is five whole-tensor kernels over both lanes:
with launches and temporaries, about eleven bytes moved for every byte digested, which
made committing to a 6 GiB KernelBench output cost more than the call and the copy of its
output together, on every call, checked or timed, in every worker. This kernel reads each
word once and keeps both lanes of its columns in registers, so it runs at the speed of
memory. (A kernel that folded the tree's pairs in registers instead was slower than the
operations: 557 ms per GiB on an H200.)

Importing this module imports Triton, which only a worker with a large output on a GPU
needs. A process trusts the kernel on a device once it has matched the tensor operations
on a sample there, bit for bit: a worker whose kernel disagreed would refuse every honest
copy that a worker without one digested. The kernel's functions carry no type annotations
because Triton reads a kernel's annotations as its own.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import triton
import triton.language as tl

_BLOCK = 512  # columns per program
#: device -> whether this process's kernel matched the tensor operations there. Filled in
#: place (never rebound): the integrity check takes a rebound module attribute for tampering
_TRUSTED: dict[torch.device, bool] = {}

Chain = Callable[[torch.Tensor], torch.Tensor]


@triton.jit
def _chain_kernel(words, out, columns, rows: tl.constexpr, k0, m0, k1, m1,
                  s0: tl.constexpr, s1: tl.constexpr, block: tl.constexpr):
    """Columns [i * block, (i + 1) * block) of `words` ([rows, columns]) folded from the
    top word down, in both lanes: `out[0]` and `out[1]`, as `digest._mix` folds them."""
    cols = tl.program_id(0).to(tl.int64) * block + tl.arange(0, block)
    live = cols < columns
    h0 = tl.load(words + cols, mask=live, other=0)
    h1 = h0
    for row in range(1, rows):
        x = tl.load(words + row * columns + cols, mask=live, other=0)
        t = (x * k0) ^ h0
        t = t * m0
        h0 = t ^ (t >> s0)
        t = (x * k1) ^ h1
        t = t * m1
        h1 = t ^ (t >> s1)
    tl.store(out + cols, h0, mask=live)
    tl.store(out + columns + cols, h1, mask=live)


def _run(grid: torch.Tensor, lanes: tuple[tuple[int, int, int], ...]) -> torch.Tensor:
    rows, columns = grid.shape
    out = torch.empty((2, columns), dtype=torch.int64, device=grid.device)
    (k0, m0, s0), (k1, m1, s1) = lanes
    _chain_kernel[(triton.cdiv(columns, _BLOCK),)](
        grid, out, columns, rows, k0, m0, k1, m1, s0, s1, _BLOCK, num_warps=4)
    return out


def _sample(rows: int, device: torch.device) -> torch.Tensor:
    """Words with every bit in play, the same in every process; a partial last block."""
    generator = torch.Generator(device=device).manual_seed(0x5EED)
    return torch.randint(-2**63, 2**63 - 1, (rows, 3 * _BLOCK + 77), dtype=torch.int64,
                         device=device, generator=generator)


def chain(grid: torch.Tensor, lanes: tuple[tuple[int, int, int], ...],
          by_operations: Chain) -> torch.Tensor | None:
    """`grid` ([rows, columns] int64 words on a GPU, contiguous) chained down its columns in
    both `lanes` (multipliers as int64 values, and shifts), as [2, columns]; None where this
    process cannot trust the kernel on that device (it cannot build there, or it disagreed
    with `by_operations` on the sample), and the caller's tensor operations stand in."""
    device = grid.device
    if device not in _TRUSTED:
        try:
            sample = _sample(grid.shape[0], device)
            _TRUSTED[device] = torch.equal(_run(sample, lanes), by_operations(sample))
        except Exception:  # no compiler for this GPU, say: the operations stand in
            _TRUSTED[device] = False
    return _run(grid, lanes) if _TRUSTED[device] else None


def trusted(device: torch.device) -> bool:
    """Whether this process folds through the kernel on `device`."""
    return _TRUSTED.get(device, False)
