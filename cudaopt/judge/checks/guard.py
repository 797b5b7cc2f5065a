"""The operator guard: which PyTorch operators the candidate may execute.

The operator guard is a dispatch-level mode, so it sees every aten operator the candidate
executes, including those its C++ extension issues through the dispatcher (`torch::matmul`).
The candidate's own kernels, called through pybind, never reach the dispatcher; registered
as custom ops (`torch.library`, `TORCH_LIBRARY`) they do, and their bodies are watched too.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

# Allocation, views and metadata: what a kernel's host code legitimately needs.
ALLOWED_OPS = frozenset("""
empty empty_like empty_strided new_empty new_empty_strided zeros zeros_like zero_ fill_
resize_ set_ view _unsafe_view as_strided alias detach t transpose permute expand unsqueeze
squeeze slice select narrow split split_with_sizes unbind chunk unfold view_as_real
view_as_complex _reshape_alias lift_fresh sym_size sym_stride sym_numel sym_storage_offset
is_contiguous _local_scalar_dense record_stream
""".split())


class OpGuard(TorchDispatchMode):
    """Records every forbidden operator executed while active; lets it run so the verdict can
    say both what was wrong and whether the result was right."""

    def __init__(self, allow: Iterable[str] = ()):
        super().__init__()
        extra = set(allow)
        self.allow_all = "*" in extra
        self.allowed = ALLOWED_OPS | extra
        self.seen: dict[str, int] = {}

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        """No torch.compile wrapper around `__torch_dispatch__`: building it imports
        torch._dynamo into every candidate process (4-6 s on a GPU machine, the largest part
        of the worker's start), and the guard is never meant to be compiled."""
        return False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        if func.namespace in ("aten", "prims") and not self.allow_all:
            name = func.overloadpacket.__name__
            if name not in self.allowed and str(func.overloadpacket) not in self.allowed:
                key = f"{func.namespace}.{name}"
                self.seen[key] = self.seen.get(key, 0) + 1
            return func(*args, **(kwargs or {}))
        return self._inside(func, args, kwargs or {})

    def _inside(self, func, args: tuple, kwargs: dict):  # noqa: ANN001, ANN202
        """Run a non-aten operator (a custom op) with the guard active inside it.

        While `__torch_dispatch__` runs, the mode is off, so the aten operators a custom
        op's body issues would go unseen: wrapping `torch.matmul` in `torch.library` would
        hide it. The op's own kernel is reached by redispatching below the Python key, with
        the guard re-entered, so every call its body makes is dispatched through it again.
        """
        keys = [torch._C._dispatch_keys(t) for t in tree_leaves((args, kwargs))
                if isinstance(t, torch.Tensor)]
        if self.allow_all or not keys:
            return func(*args, **kwargs)
        below = torch._C._dispatch_keyset_full_after(torch._C.DispatchKey.Python)
        keyset = keys[0]
        for more in keys[1:]:
            keyset = keyset | more
        with self:
            return func.redispatch(keyset & below, *args, **kwargs)

    def violations(self) -> list[str]:
        return [f"PyTorch operator {name} executed ({n}x): only allocation, views and the "
                "candidate's own kernels are allowed" for name, n in sorted(self.seen.items())]
