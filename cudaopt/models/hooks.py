"""Forward hooks on every submodule: the dynamic call tree of one forward pass.

Time is attributed along the calls actually made (not the static module tree), so a module
shared between parents or called twice is counted once per call, and a module's self time is
its inclusive time less its children's: the self times of all modules add up to the forward.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from cudaopt.models.specs import ArgSpec, describe, positional


@dataclass
class Call:
    path: str
    parent: int  # index of the enclosing call, -1 for the outermost
    start: Any
    end: Any = None


@dataclass
class Captured:
    specs: list[ArgSpec] | None = None
    error: str | None = None
    args: list[Any] = field(default_factory=list)  # clones, kept only when asked
    output: Any = None


class CallTree:
    """Install with `with CallTree(model, device) as tree: model(*inputs)`."""

    def __init__(self, model: torch.nn.Module, device: str, capture: bool = False,
                 keep_args: Callable[[str], bool] | None = None):
        self.model, self.cuda = model, device == "cuda"
        self.capture, self.keep_args = capture, keep_args or (lambda path: False)
        self.calls: list[Call] = []
        self.captured: dict[str, Captured] = {}
        self._stack: list[int] = []
        self._handles: list[Any] = []

    def _mark(self) -> Any:
        if self.cuda:
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            return event
        return time.perf_counter()

    def __enter__(self) -> CallTree:
        for path, module in self.model.named_modules():
            self._handles.append(module.register_forward_pre_hook(
                self._pre(path), with_kwargs=True))
            self._handles.append(module.register_forward_hook(self._post(path), always_call=True))
        return self

    def __exit__(self, *exc: object) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()

    def _pre(self, path: str) -> Callable[..., None]:
        def hook(module: torch.nn.Module, args: tuple, kwargs: dict) -> None:
            if self.capture and path not in self.captured:
                self.captured[path] = _capture(module, args, kwargs, self.keep_args(path))
            parent = self._stack[-1] if self._stack else -1
            self._stack.append(len(self.calls))
            self.calls.append(Call(path, parent, self._mark()))
        return hook

    def _post(self, path: str) -> Callable[..., None]:
        def hook(module: torch.nn.Module, args: tuple, output: Any) -> None:
            call = self.calls[self._stack.pop()]
            call.end = self._mark()
            kept = self.captured.get(path)
            if kept is not None and kept.args and kept.output is None:
                kept.output = _clone(output)
        return hook

    def durations_ms(self) -> list[float]:
        if self.cuda:
            torch.cuda.synchronize()
            return [c.start.elapsed_time(c.end) for c in self.calls]
        return [(c.end - c.start) * 1e3 for c in self.calls]


def _capture(module: torch.nn.Module, args: tuple, kwargs: dict, keep: bool) -> Captured:
    try:
        values = positional(module, args, kwargs)
        captured = Captured([describe(v) for v in values])
    except TypeError as exc:
        return Captured(error=str(exc))
    if keep:
        captured.args = [_clone(v) for v in values]
    return captured


def _clone(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, (tuple, list)):
        return type(value)(_clone(v) for v in value)
    return value


def attribute(calls: list[Call], durations_ms: list[float]) -> dict[str, tuple[float, float, int]]:
    """path -> (self ms, inclusive ms, calls), summed over the calls recorded."""
    child_ms = [0.0] * len(calls)
    for call, ms in zip(calls, durations_ms, strict=True):
        if call.parent >= 0:
            child_ms[call.parent] += ms
    out: dict[str, tuple[float, float, int]] = {}
    for i, call in enumerate(calls):
        own = durations_ms[i] - child_ms[i]  # nested marks: never below zero but for rounding
        s, t, n = out.get(call.path, (0.0, 0.0, 0))
        out[call.path] = (s + own, t + durations_ms[i], n + 1)
    return out
