"""The Triton kernel behind `digest_fused`, in a module of its own: importing it imports
Triton, which only a worker with an output on a GPU needs. Its functions carry no type
annotations because Triton reads a kernel's annotations as its own."""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def _tree(x, k, m, shift: tl.constexpr, levels: tl.constexpr):
    """One lane's `levels` levels over a block: the left argument of each pair is its even
    word, the right its odd one, as in `digest._fold`."""
    for _ in tl.static_range(levels):
        a, b = tl.split(tl.reshape(x, (x.shape[0] // 2, 2)))
        t = (b * k) ^ a
        t = t * m
        x = t ^ (t >> shift)
    return tl.sum(x, axis=0)  # the one value left


@triton.jit
def fold_blocks(words, out, blocks, k0, m0, k1, m1, s0: tl.constexpr, s1: tl.constexpr,
                levels: tl.constexpr):
    """Block `i` of `words` folded to `out[0, i]` in the first lane and `out[1, i]` in the
    second."""
    block = tl.program_id(0)
    size: tl.constexpr = 1 << levels
    x = tl.load(words + block.to(tl.int64) * size + tl.arange(0, size))
    tl.store(out + block, _tree(x, k0, m0, s0, levels))
    tl.store(out + blocks + block, _tree(x, k1, m1, s1, levels))
