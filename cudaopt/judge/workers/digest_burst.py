"""The digests of a burst's outputs, the same values as `digest.digest` gives each alone.

A warm burst digests 50 calls twice a round; one at a time, each output made the tree's
forty-odd launches and its own copy to the host. Outputs of one structure fold up the tree
as one stack instead, and come to the host in one copy per leaf.
"""

from __future__ import annotations

import json
from typing import Any

import torch

from cudaopt.judge.workers import digest as single

_view = torch.Tensor.view  # captured at import, as `digest` captures its own

#: Outputs digested together at most (`digests`): the tree's temporaries are about three
#: times their stack
BATCH_BYTES = 64 << 20


def digests(calls: list[tuple[Any, dict[str, torch.Tensor]]]) -> list[str]:
    """`digest` of each call's outputs, for a burst of calls of one task. Outputs too large
    to stack, or of other structures, are digested one by one."""
    found: list[str] = []
    for start, end in _stackable(calls):
        if end - start == 1:
            found.append(single.digest(*calls[start]))
            continue
        group = calls[start:end]
        skeleton = group[0][0]
        begun = single.started(skeleton)  # the same structure for the whole run
        hashes = [begun.copy() for _ in group]
        for path in single.leaf_paths(skeleton):
            head = single.leaf_head(group[0][1][path])
            raws = torch.stack([single.raw_bytes(t[path]) for _, t in group])
            words = _view(raws, torch.int64)
            rows = raws if words.shape[-1] <= single.TOP else single.tree(words.unsqueeze(1))
            host = memoryview(single.host_bytes(rows))
            size = len(host) // len(group)
            for i, h in enumerate(hashes):
                h.update(head)
                h.update(host[i * size:(i + 1) * size])
        found += [h.hexdigest() for h in hashes]
    return found


def _stackable(calls: list[tuple[Any, dict[str, torch.Tensor]]]) -> list[tuple[int, int]]:
    """Runs of consecutive calls whose outputs stack (the same `_stack_key`), `BATCH_BYTES`
    a run at most; a call whose outputs cannot stack is a run of its own."""
    runs: list[tuple[int, int]] = []
    key, size = None, 0
    for i, (skeleton, tensors) in enumerate(calls):
        found, nbytes = _stack_key(skeleton, tensors)
        if runs and found is not None and found == key and size + nbytes <= BATCH_BYTES:
            runs[-1] = (runs[-1][0], i + 1)
            size += nbytes
        else:
            runs.append((i, i + 1))
            key, size = found, nbytes
    return runs


def _stack_key(skeleton: Any, tensors: dict[str, torch.Tensor]) -> tuple[Any, int]:
    """What outputs must share to stack (their structure, and each leaf's dtype, shape and
    device), or None where a leaf folds otherwise than up the tree alone (the chain, or
    bytes past its last whole word); and their bytes."""
    leaves = [tensors[path] for path in single.leaf_paths(skeleton)]
    sizes = [t.numel() * t.element_size() for t in leaves]
    if any(size % 8 or size // 8 > single.TREE_MAX_WORDS for size in sizes):
        return None, sum(sizes)
    return (json.dumps(skeleton, sort_keys=True),
            [(t.dtype, tuple(t.shape), t.device) for t in leaves]), sum(sizes)
