"""The digest's first tree levels in one Triton kernel, for outputs on a GPU.

Done as tensor operations, each level of `digest` is five whole-tensor kernels over both
lanes: about eleven bytes moved for every byte digested, so a 6 GiB KernelBench output took
about 50 ms on an H100 to commit to, on every call, checked or timed, in every worker.
This kernel reads each 8 KiB block of words once and folds it, in registers, down the same
pairs of the same tree as `digest._fold` (even word left, odd word right), in both lanes,
to one value per lane; `_fold` goes on from there. The value is the same bit for bit, so
workers on different paths (a CPU judge, a worker without Triton) still agree.

It applies only where the tree has no odd element in those levels (the chunk is a whole
number of blocks) and would still be above `_TOP` values after them; elsewhere, and where
Triton cannot run, `levels` says None and the tensor operations do all the levels.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

LEVELS = 10  # tree levels done in the kernel: blocks of 2**LEVELS words
BLOCK_WORDS = 1 << LEVELS
#: Chunks smaller than this keep the tensor operations: the kernel's first compile in a
#: process (about a second) would cost more than it saves
MIN_WORDS = 1 << 25

_kernel: Any = None
_broken = False
Fold = Callable[[torch.Tensor], torch.Tensor]


def levels(words: torch.Tensor, lanes: tuple[tuple[int, int, int], ...], top: int,
           fold: Fold) -> torch.Tensor | None:
    """`words` (a contiguous int64 chunk on a GPU) folded `LEVELS` levels in both `lanes`
    (signed multipliers and shifts), as a [2, n / BLOCK_WORDS] tensor; None where this
    path does not apply. `fold` is the tensor operations' whole tree, which the kernel must
    match on a sample before this process trusts it: a worker whose kernel disagreed would
    refuse every honest copy that a worker without one digested."""
    global _kernel, _broken
    n = words.numel()
    if (_broken or words.device.type != "cuda" or n < MIN_WORDS or n % BLOCK_WORDS
            or n // BLOCK_WORDS <= top // 2):
        return None
    try:
        if _kernel is None:
            from cudaopt.judge.workers.digest_kernel import fold_blocks

            _kernel = fold_blocks
            sample = _sample((top // 2 + 1) * BLOCK_WORDS, words.device)
            _broken = not torch.equal(fold(_run(sample, lanes)), fold(sample))
            if _broken:
                return None
        return _run(words, lanes)
    except Exception:  # no Triton, or it cannot build here: the tensor operations stand in
        _broken = True
        return None


def _run(words: torch.Tensor, lanes: tuple[tuple[int, int, int], ...]) -> torch.Tensor:
    blocks = words.numel() // BLOCK_WORDS
    out = torch.empty((2, blocks), dtype=torch.int64, device=words.device)
    (k0, m0, s0), (k1, m1, s1) = lanes
    _kernel[(blocks,)](words, out, blocks, k0, m0, k1, m1, s0, s1, LEVELS, num_warps=8)
    return out


def _sample(n: int, device: torch.device) -> torch.Tensor:
    """Words with every bit in play, the same in every process."""
    generator = torch.Generator(device=device).manual_seed(0x5EED)
    return torch.randint(-2**63, 2**63 - 1, (n,), dtype=torch.int64, device=device,
                         generator=generator)


def in_use() -> bool:
    """Whether this process has folded a chunk through the kernel and can go on doing so."""
    return _kernel is not None and not _broken
