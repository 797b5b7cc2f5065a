"""Runtime rules inside the candidate process: which PyTorch operators it may execute, and
whether it tampered with the functions the judge relies on.

The operator guard is a dispatch-level mode, so it sees every aten operator the candidate
executes, including those its C++ extension issues through the dispatcher (`torch::matmul`).
The candidate's own kernels, called through pybind, never reach the dispatcher.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

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

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        if func.namespace in ("aten", "prims") and not self.allow_all:
            name = func.overloadpacket.__name__
            if name not in self.allowed and str(func.overloadpacket) not in self.allowed:
                key = f"{func.namespace}.{name}"
                self.seen[key] = self.seen.get(key, 0) + 1
        return func(*args, **(kwargs or {}))

    def violations(self) -> list[str]:
        return [f"PyTorch operator {name} executed ({n}x): only allocation, views and the "
                "candidate's own kernels are allowed" for name, n in sorted(self.seen.items())]


def _attr(path: str) -> Any:
    obj: Any = {"torch": torch, "time": time, "threading": threading}[path.split(".")[0]]
    for part in path.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


# Functions a candidate could patch at import to fool the timer, the guard or the checks.
WATCHED = (
    "time.perf_counter", "time.perf_counter_ns", "time.monotonic", "time.time",
    "torch.cuda.synchronize", "torch.cuda.Event", "torch.cuda.Event.record",
    "torch.cuda.Event.elapsed_time", "torch.cuda.Event.synchronize",
    "torch.Tensor.copy_", "torch.Tensor.clone", "torch.from_file", "torch.isclose",
    "torch.utils._python_dispatch.TorchDispatchMode.__enter__",
    "torch.utils._python_dispatch.TorchDispatchMode.__exit__",
    "torch._C._push_on_torch_dispatch_stack", "torch._C._pop_torch_dispatch_stack",
    "threading.Thread.start",
)


class TamperCheck:
    """Snapshot of the judge's own functions and the library functions it trusts.

    Taken before the candidate is imported; any later difference is a violation, because
    the only reason to replace these is to change what the judge sees.
    """

    def __init__(self, judge_functions: Iterable[Callable[..., Any]]):
        import torch.utils._python_dispatch  # noqa: F401 - make the watched path resolvable

        self.library = {p: _attr(p) for p in WATCHED}
        self.judge = {f"{f.__module__}.{f.__qualname__}": (f, f.__code__) for f in judge_functions}
        self.guard_dispatch = OpGuard.__dict__["__torch_dispatch__"]

    def violations(self) -> list[str]:
        found = [f"tampering: {p} was replaced" for p, v in self.library.items()
                 if _safe_attr(p) is not v]
        found += [f"tampering: judge function {n} was modified"
                  for n, (f, code) in self.judge.items() if f.__code__ is not code]
        if OpGuard.__dict__.get("__torch_dispatch__") is not self.guard_dispatch:
            found.append("tampering: the operator guard was replaced")
        return found


def _safe_attr(path: str) -> Any:
    try:
        return _attr(path)
    except AttributeError:
        return None


def dispatch_stack_depth() -> int:
    return torch._C._len_torch_dispatch_stack()
