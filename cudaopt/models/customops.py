"""Make a swapped kernel a `torch.library` custom op, so the user's model compiles and exports.

The kernel functions a `ModelNew` calls are recorded on its task's inputs (two draws), and
each call says how the function's outputs follow from its arguments; `derive` turns that
into a spec for `oplib`. Ops the candidate registered itself (`torch.library.custom_op`,
`TORCH_LIBRARY`) keep their own fake implementations, and every op, ours or theirs, must
pass `torch.library.opcheck` on a recorded call: a fake implementation that lies about a
shape would make a compiled model silently wrong. A function that cannot be described (an
output shape that depends on the data) is named in a warning and stays a plain call.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_map

from cudaopt.models import oplib
from cudaopt.models.opspec import Call, derive

CHECKS = ("test_schema", "test_faketensor")


class KernelNotRegistered(UserWarning):
    """A kernel left as a plain call: torch.compile breaks its graph there."""


class BadCustomOp(Exception):
    """A custom op whose registration would make a compiled or exported model wrong."""


@dataclass
class Ops:
    """What a swap registered: op names, and the functions left as plain calls (why)."""

    namespace: str
    specs: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    registered: list[str] = field(default_factory=list)  # ns::name, ours and the candidate's
    plain: dict[str, str] = field(default_factory=dict)  # function -> why not registered


class _Seen(TorchDispatchMode):
    """The first call of every custom op the candidate registered itself, its args cloned."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: dict[Any, tuple[tuple, dict]] = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        if func.namespace not in ("aten", "prims") and func not in self.calls:
            self.calls[func] = tree_map(_clone, (args, kwargs or {}))
        return func(*args, **(kwargs or {}))


def _clone(value: Any) -> Any:
    return value.detach().clone() if isinstance(value, torch.Tensor) else value


def make_ops(module: ModuleType, run: Callable[[], None], namespace: str, label: str) -> Ops:
    """Register the kernels `module` (an imported model_new.py) calls while `run()` runs
    twice, and point its extension globals at them. Raises `BadCustomOp` naming the op
    whose registration fails opcheck."""
    ops = Ops(namespace)
    calls, seen = _record(module, run)
    for glob, functions in calls.items():
        for fname, made in functions.items():
            try:
                spec = derive(made)
            except oplib.NotRegistrable as exc:
                ops.plain[fname] = str(exc)
                continue
            op = oplib.register(namespace, fname, made[0].fn, spec)
            problem = _opcheck(op, made[0].args, {})
            if problem:
                ops.plain[fname] = f"its derived fake implementation fails opcheck: {problem}"
                continue
            ops.specs.setdefault(glob, {})[fname] = spec
    ops.registered = oplib.install(module, namespace, ops.specs)
    for op, (args, kwargs) in seen.items():
        problem = _opcheck(op, args, kwargs)
        if problem:
            raise BadCustomOp(f"custom op {op.name()} of {label} fails torch.library.opcheck "
                              f"on its task's inputs: {problem}")
        ops.registered.append(op.name())
    for fname, why in ops.plain.items():
        warnings.warn(f"kernel {fname} of {label} is not a custom op ({why}); it is called as "
                      "a plain function: torch.compile breaks its graph there and "
                      "torch.export cannot carry it", KernelNotRegistered, stacklevel=3)
    return ops


def _record(module: ModuleType, run: Callable[[], None]) -> tuple[dict, dict]:
    """Run twice with every extension global replaced by a recorder; returns the calls per
    global and function, and the candidate's own custom ops with a call each."""
    exts = oplib.extensions(module)
    recorders = {glob: _Recorder(ext) for glob, ext in exts.items()}
    seen = _Seen()
    try:
        for glob, recorder in recorders.items():
            setattr(module, glob, recorder)
        with seen:
            for seed in (0, 1):
                with torch.random.fork_rng(devices=[]):
                    torch.manual_seed(seed)
                    run()
    finally:
        for glob, ext in exts.items():
            setattr(module, glob, ext)
    return {g: r.calls for g, r in recorders.items() if r.calls}, seen.calls


class _Recorder(ModuleType):
    """Stands in for an extension module: every function call is made and recorded."""

    def __init__(self, ext: ModuleType) -> None:
        super().__init__(ext.__name__)
        self._ext = ext
        self.calls: dict[str, list[Call]] = {}

    def __getattr__(self, name: str) -> Any:
        fn = getattr(self._ext, name)
        if not callable(fn) or name.startswith("__"):
            return fn

        def call(*args: Any, **kwargs: Any) -> Any:
            made = Call.make(fn, args, kwargs)
            self.calls.setdefault(name, []).append(made)
            return made.result

        return call


def _opcheck(op: Any, args: tuple, kwargs: dict) -> str | None:
    """None when `op` passes opcheck's schema and fake-tensor tests on this call, else why."""
    overload = op if isinstance(op, torch._ops.OpOverload) else op.default
    try:
        torch.library.opcheck(overload, tree_map(_clone, args), tree_map(_clone, kwargs),
                              test_utils=CHECKS)
    except Exception as exc:  # noqa: BLE001 - any failure of the check is its verdict
        return str(exc).split(" (scroll up")[0].splitlines()[0][:400]
    return None
