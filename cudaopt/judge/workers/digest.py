"""A call's outputs bound the moment it returns: the commitment a worker sends with its reply.

A worker keeps the copies of its outputs in its own memory until the judge asks for the ones
it checks, and in the candidate's process that memory is the candidate's: it could write the
right answer into a copy once the clock has stopped and it has learnt which call is checked.
So every call's reply carries a digest of its outputs, computed before the reply leaves,
and the reference worker recomputes the digest of whatever the candidate later hands over:
a copy changed after the call no longer matches. To match it anyway, the candidate would
have had to know the right answer's digest when the call returned, that is, to have
computed the answer inside the time the judge's own clock charges to the call.

The digest reads every byte. An output may differ from the reference's within tolerance,
which leaves a candidate freedom in the low bits of every element: a sum of per-element
terms (any linear or additive digest) could be steered to a committed value by choosing
those bits, so words are folded by a mixing function that is not symmetric in its
arguments (the order of words counts), in two independent 64-bit lanes (matching a 128-bit
state by meeting in the middle costs about 2^64 work): first, in a chunk larger than
`TREE_MAX_WORDS`, down each column of the chunk seen as `_ROWS` rows (a chain, one word at
a time), then pairwise up a tree, until a few hundred values are left, which SHA-256
takes from there (an output digested alone folds its tree's last levels on the host, where
they cost less than their launches). The chain reads each word once, so on a GPU one
kernel (`digest_kernel`) does it at the speed of memory; elsewhere, and for outputs too
small to repay that kernel's build, the same folds are whole-tensor integer operations.
Either way the value is the same on any device.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

# Each lane: (multiplier of the right argument, multiplier after mixing, shift), odd
# multipliers so that no bit of an argument is lost. Python ints past int64 are stored
# as their two's-complement value.
_LANES = ((0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 29), (0x94D049BB133111EB,
                                                         0xD6E8FEB86659FD93, 31))
_CHUNK_WORDS = 1 << 27  # 1 GiB of words folded at once: the chain's temporaries stay 32 MiB
_ROWS = 64  # words chained down each column before the tree
#: Values of a lane left to SHA-256. What the tree leaves goes to the host and through
#: SHA-256 there, inside the request the judge's clock brackets (see `warm_figures`): at
#: 4096 a warm burst of 50 outputs sent 3.2 MiB, and its digest took a median of 7.9-11.0
#: ms on an H100 host, the baseline's and the candidate's process up to 2.4 ms apart over
#: a whole judgement (2026-12-06): enough to cost an honest kernel its warm figure.
TOP = 256
#: Where an output is digested alone, its device folds down to this many values a lane and
#: the host the rest (`_host_levels`): on a GPU each level is five launches, and the four
#: levels down to `TOP` made one 4 MiB output's digest 0.448 -> 0.543 ms on an H100.
_DEVICE_TOP = 4096
#: Tensors smaller than this (2 GiB) fold through tensor operations on a GPU too: the
#: kernel's first build in a process (about a second) would cost more than it saves
KERNEL_MIN_WORDS = 1 << 28
#: Tensors up to this (64 MiB) fold up the tree alone: on a GPU each operation is a launch,
#: and a 16 MiB output took 63 rows of the chain (over 300 launches, about 2 ms of host time
#: on every call of a small task) where the tree takes 9 levels (45). The tree's first level
#: holds about three times its input in temporaries, which above this the chain avoids.
TREE_MAX_WORDS = 1 << 23
_BLOCK_WORDS = 1 << 18  # words a CPU folds through the tree's first levels at once
_T = torch.Tensor
_view, _reshape, _contiguous, _cpu, _numpy = (_T.view, _T.reshape, _T.contiguous, _T.cpu,
                                              _T.numpy)
_xor, _mul, _shr = torch.bitwise_xor, torch.mul, torch.bitwise_right_shift


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


#: `_LANES` as int64 values, the form both the tensors and the kernel take them in
_SIGNED_LANES: tuple[tuple[int, int, int], ...] = tuple(
    (_signed(k), _signed(m), shift) for k, m, shift in _LANES)
_CONSTANTS: dict[torch.device, tuple[torch.Tensor, ...]] = {}


def _constants(device: torch.device) -> tuple[torch.Tensor, ...]:
    """Both lanes' constants as [2, 1] columns on `device`: one operation mixes both."""
    if device not in _CONSTANTS:
        _CONSTANTS[device] = tuple(
            torch.tensor([[lane[i]] for lane in _SIGNED_LANES], dtype=torch.int64,
                         device=device) for i in range(3))
    return _CONSTANTS[device]


def _mix(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """One level of both lanes, [2, n] (or [n], the same for both) in, [2, n] out: a new
    tensor, never a view of the output."""
    k, m, shift = _constants(b.device)
    t = _mul(b, k)
    t = _xor(t, a, out=t)
    t = _mul(t, m, out=t)
    return _xor(t, _shr(t, shift), out=t)


def _fold(words: torch.Tensor, kernel: bool, top: int) -> torch.Tensor:
    """One chunk in both lanes, down to at most `top` values each: chained down the columns
    of `_ROWS` rows where the chunk is over `TREE_MAX_WORDS`, then up the tree."""
    if words.numel() <= TREE_MAX_WORDS:
        return tree(words, top)
    columns = words.numel() // _ROWS
    grid = _view(words[:columns * _ROWS], (_ROWS, columns))
    level = _chained(grid, kernel)
    tail = words[columns * _ROWS:]  # fewer than `_ROWS` words: into the last columns
    if tail.numel():
        level[:, columns - tail.numel():] = _mix(level[:, columns - tail.numel():], tail)
    return tree(level, top)


def _chained(grid: torch.Tensor, kernel: bool) -> torch.Tensor:
    """Each column folded from its top word down, as a [2, columns] tensor: in one kernel
    on a GPU where `kernel` asks for it and this process's kernel matches the operations."""
    if kernel and grid.device.type == "cuda":
        from cudaopt.judge.workers import digest_kernel

        found = digest_kernel.chain(grid, _SIGNED_LANES, _chained_by_operations)
        if found is not None:
            return found
    return _chained_by_operations(grid)


def preload_kernel() -> None:
    """Import the chain's kernel module (and with it Triton) now, where a GPU build of
    torch and Triton are installed: a worker calls this as it starts, ahead of any
    judgement, instead of paying for the import inside its first call's digest (a fresh
    candidate process's first digest of a 6 GiB output took 2.6 s on an H100, the next
    5.3 ms). Importing touches no GPU; the kernel is built and checked on first use."""
    if torch.version.cuda is None or importlib.util.find_spec("triton") is None:
        return
    try:
        from cudaopt.judge.workers import digest_kernel  # noqa: F401 - imported for later
    except Exception:  # noqa: BLE001 - a broken Triton: the tensor operations stand in
        pass


def _chained_by_operations(grid: torch.Tensor) -> torch.Tensor:
    level = _mix(grid[0], grid[1])
    for row in range(2, grid.shape[0]):
        level = _mix(level, grid[row])
    return level


def tree(words: torch.Tensor, top: int | None = None) -> torch.Tensor:
    """Pairs folded level by level down to at most `top` (`TOP`) values per lane (an odd
    element out at a level is folded into that level's last value)."""
    top = TOP if top is None else top
    level = _first_levels(words, top) if words.device.type == "cpu" else words
    while level.shape[-1] > top:
        level = _level(level)
    return level


def _level(level: Any, mix: Callable[[Any, Any], Any] = _mix) -> Any:
    """One level of the tree, on a tensor with `_mix` or on the host's words with
    `_host_mix`: the same pairs and the same rule for an odd element out."""
    n = level.shape[-1]
    pairs = mix(level[..., 0:n - 1:2], level[..., 1:n:2])
    if n % 2:
        pairs[..., -1:] = mix(pairs[..., -1:], level[..., n - 1:])
    return pairs


def _first_levels(words: torch.Tensor, top: int) -> torch.Tensor:
    """The tree's first levels a block of `_BLOCK_WORDS` at a time, on a CPU: whole-tensor
    levels make temporaries of about three times the words, which no cache holds (on two
    cores a 64 MiB output took 104 ms that way, 26 ms a block at a time and 16 ms down the
    chain; 16 MiB: 10, 8 and 5 ms). The values are the tree's own: in its first
    log2(`_BLOCK_WORDS`) - 1 levels no pair spans two aligned blocks, and the last block
    takes the words left over, so it alone can be odd at a level, and at every level it
    holds a pair for its odd word to fold into."""
    n, block = words.shape[-1], _BLOCK_WORDS
    depth = 0
    while depth < block.bit_length() - 2 and n >> depth > top:
        depth += 1
    if n < 2 * block or depth == 0:
        return words
    starts = list(range(0, n // block * block, block))  # the last block runs to the end
    parts = []
    for start, end in zip(starts, [*starts[1:], n], strict=True):
        level = words[..., start:end]
        for _ in range(depth):
            level = _level(level)
        parts.append(level)
    return torch.cat(parts, dim=-1)


def _host_array(t: torch.Tensor) -> np.ndarray:
    return _numpy(_cpu(_contiguous(t)))


def host_bytes(t: torch.Tensor) -> bytes:
    return _host_array(t).tobytes()


#: `_LANES` as [2, 1] uint64 columns (multipliers) and int64 ones (shifts), for the host
_HOST_K, _HOST_M = (np.array([[lane[i]] for lane in _LANES], dtype=np.uint64) for i in (0, 1))
_HOST_SHIFT = np.array([[lane[2]] for lane in _LANES], dtype=np.int64)


def _host_mix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`_mix` on the host, bit for bit: uint64 products wrap as int64 ones do on a device,
    and the shift is arithmetic, as `bitwise_right_shift` is on int64."""
    t = b * _HOST_K
    t ^= a
    t *= _HOST_M
    return t ^ (t.view(np.int64) >> _HOST_SHIFT).view(np.uint64)


def _host_levels(level: np.ndarray) -> bytes:
    """The tree's last levels (uint64 words, one lane or both) down to `TOP` values a lane,
    as `tree` makes them, and their bytes."""
    while level.shape[-1] > TOP:
        level = _level(level, _host_mix)
    return np.ascontiguousarray(level).tobytes()


def raw_bytes(t: torch.Tensor) -> torch.Tensor:
    """A tensor's bytes, in order, as one flat uint8 tensor."""
    return _view(_reshape(_contiguous(t), -1), torch.uint8)


def _update(h: Any, t: torch.Tensor) -> None:
    """Feed a tensor's bytes to `h`: through both lanes' trees where it is large."""
    raw = raw_bytes(t)
    whole = raw.numel() // 8 * 8
    words = _view(raw[:whole], torch.int64)
    if words.numel() <= TOP:
        h.update(host_bytes(raw))
        return
    kernel = words.numel() >= KERNEL_MIN_WORDS
    for start in range(0, words.numel(), _CHUNK_WORDS):
        folded = _fold(words[start:start + _CHUNK_WORDS], kernel, _DEVICE_TOP)
        h.update(_host_levels(_host_array(folded).view(np.uint64)))
    h.update(host_bytes(raw[whole:]))


def leaf_paths(skeleton: Any) -> list[str]:
    """The tensor leaves of an output skeleton (see `tensors.flatten`), in order."""
    (kind, value), = skeleton.items()
    if kind == "tensor":
        return [value]
    if kind in ("list", "tuple"):
        return [p for item in value for p in leaf_paths(item)]
    if kind == "dict":
        return [p for item in value.values() for p in leaf_paths(item)]
    return []


def digest(skeleton: Any, tensors: dict[str, torch.Tensor]) -> str:
    """The commitment to a call's outputs: their structure, every leaf's dtype and shape,
    and every byte."""
    h = started(skeleton)
    for path in leaf_paths(skeleton):
        h.update(leaf_head(tensors[path]))
        _update(h, tensors[path])
    return h.hexdigest()


def started(skeleton: Any) -> Any:
    """A digest's hash, begun with the outputs' structure."""
    return hashlib.sha256(json.dumps(skeleton, sort_keys=True).encode())


def leaf_head(t: torch.Tensor) -> bytes:
    """What a leaf's bytes are preceded by: its dtype and shape."""
    return f"\0{t.dtype}\0{tuple(t.shape)}\0".encode()
