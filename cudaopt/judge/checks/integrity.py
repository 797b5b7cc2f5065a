"""Is the candidate process still the one the judge set up?

A snapshot taken before the candidate is imported: the library functions the judge and the
baselines rely on, the judge's own modules, classes and functions, and the interpreter's
hooks (and, once it is loaded, its threads). Any later difference is a violation: the only
reason to replace these is to change what the judge sees.

This is the second line of defence, and it runs inside a process the candidate controls: a
candidate determined to hide its tracks can defeat it. The first line does not depend on it:
reference outputs, comparisons and baselines live in another process, inputs come from
secret seeds, and the parent process's own clock brackets every timed call.
"""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from types import FunctionType, ModuleType
from typing import Any

import torch
import torch.nn.functional  # noqa: F401 - make the watched namespaces resolvable
import torch.utils._python_dispatch

_frames = sys._current_frames
_gettrace, _getprofile = sys.gettrace, sys.getprofile
_thread_hooks = (getattr(threading, "gettrace", lambda: None),
                 getattr(threading, "getprofile", lambda: None))
_threads = threading.enumerate
_monitoring = getattr(sys, "monitoring", None)
_TORCH_DIR = str(Path(torch.__file__).resolve().parent)

# Callables in these modules and attributes of these classes (through their bases) are what
# a candidate would replace to fool a timer, slow a baseline or blind the operator guard.
MODULES = ("torch", "torch.nn.functional", "torch.cuda", "torch.testing", "torch._C", "time",
           "threading", "builtins", "gc")
CLASSES = ("torch.Tensor", "torch.nn.Module", "torch.cuda.Event", "torch.cuda.Stream",
           "torch.utils._python_dispatch.TorchDispatchMode", "threading.Thread")


def _resolve(path: str) -> Any:
    obj: Any = sys.modules[path.split(".")[0]]
    for part in path.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def _class_view(cls: type) -> dict[str, Any]:
    """Every attribute as the class resolves it, without triggering descriptors."""
    view: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        view.update(vars(klass))
    return view


def _torch_patched_itself(old: Any, new: Any) -> bool:
    """torch wraps a few of its own functions when a submodule (torch._dynamo) is imported."""
    code = getattr(new, "__code__", None)
    wrapped = getattr(new, "__wrapped__", old)
    return code is not None and code.co_filename.startswith(_TORCH_DIR) and wrapped is old


def _hooks() -> dict[str, Any]:
    hooks = {"sys.settrace": _gettrace(), "sys.setprofile": _getprofile(),
             "threading.settrace": _thread_hooks[0](), "threading.setprofile": _thread_hooks[1](),
             "gc.callbacks": tuple(gc.callbacks)}
    if _monitoring is not None:
        hooks["sys.monitoring"] = tuple(_monitoring.get_tool(i) for i in range(6))
    return hooks


class Integrity:
    """The snapshot, and the differences from it as readable violations."""

    def __init__(self, judge_modules: Iterable[ModuleType]):
        self.library = {p: {n: v for n, v in vars(_resolve(p)).items() if callable(v)}
                        for p in MODULES}
        self.classes = {p: _class_view(_resolve(p)) for p in CLASSES}
        self.judge: dict[str, tuple[Any, str, Any]] = {}
        self.code: dict[str, tuple[FunctionType, Any]] = {}
        for module in judge_modules:
            self._snapshot_judge(module)
        self.hooks = _hooks()
        self.threads = set(_frames())
        self.instances: list[tuple[str, Any, dict[str, Any]]] = []

    def _snapshot_judge(self, module: ModuleType) -> None:
        for name, value in vars(module).items():
            key = f"{module.__name__}.{name}"
            self.judge[key] = (module, name, value)
            self._snapshot_code(key, value)
            if isinstance(value, type) and value.__module__ == module.__name__:
                for attr, member in vars(value).items():
                    self.judge[f"{key}.{attr}"] = (value, attr, member)
                    self._snapshot_code(f"{key}.{attr}", member)

    def _snapshot_code(self, key: str, value: Any) -> None:
        func = getattr(value, "__func__", value)
        if isinstance(func, FunctionType):
            self.code[key] = (func, _code_parts(func))

    def loaded(self) -> None:
        """Threads running once the candidate is loaded belong to the libraries it imported;
        a thread that appears later was started by a call, to work after it returned."""
        self.threads = set(_frames())

    def watch(self, name: str, obj: Any, frozen: Iterable[str]) -> None:
        """Also watch a judge-owned object: these attributes stay, and none of its class's
        methods may be shadowed by an attribute set on the object itself."""
        self.instances.append((name, obj, {k: vars(obj)[k] for k in frozen}))

    def violations(self) -> list[str]:
        found = self._library() + self._judge() + self._hook_changes()
        return found + self._new_threads()

    def _library(self) -> list[str]:
        found = []
        for path, before in self.library.items():
            now = vars(_resolve(path))
            found += [f"{path}.{n}" for n, v in before.items()
                      if now.get(n) is not v and not _torch_patched_itself(v, now.get(n))]
        for path, before in self.classes.items():
            now = _class_view(_resolve(path))
            found += [f"{path}.{n}" for n, v in before.items()
                      if now.get(n) is not v and not _torch_patched_itself(v, now.get(n))]
        return [f"tampering: {name} was replaced after the candidate was imported"
                for name in found]

    def _judge(self) -> list[str]:
        found = [f"tampering: judge attribute {key} was replaced"
                 for key, (owner, name, value) in self.judge.items()
                 if vars(owner).get(name, _MISSING) is not value]
        found += [f"tampering: judge function {key} was modified"
                  for key, (func, parts) in self.code.items()
                  if any(a is not b for a, b in zip(_code_parts(func), parts, strict=True))]
        for name, obj, frozen in self.instances:
            state = vars(obj)
            found += [f"tampering: judge object {name}.{k} was replaced" for k, v in frozen.items()
                      if state.get(k, _MISSING) is not v]
            found += [f"tampering: judge object {name}.{k} shadows its class's method"
                      for k in state if callable(getattr(type(obj), k, None))]
        return found

    def _hook_changes(self) -> list[str]:
        now = _hooks()
        return [f"tampering: an interpreter hook was installed ({name}): it runs the "
                "candidate's code inside the judge's own steps"
                for name, value in self.hooks.items() if now.get(name) != value]

    def _new_threads(self) -> list[str]:
        names = {t.ident: t.name for t in _threads()}
        extra = [names.get(ident, f"thread {ident}") for ident in _frames()
                 if ident not in self.threads]
        return [f"background thread still running after forward returned: {name} (work must "
                "finish inside forward)" for name in sorted(extra)]


_MISSING = object()


def _code_parts(func: FunctionType) -> tuple[Any, Any, Any]:
    """What defines a function's behaviour; replacing any of them patches it."""
    return func.__code__, func.__defaults__, func.__kwdefaults__
