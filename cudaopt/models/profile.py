"""`profile-model`: where a forward pass spends its time, module by module.

Host time on CPU (operators run synchronously); on CUDA, device time between events
recorded on the current stream as each module is entered and left. The whole forward is
also timed without hooks, eagerly and under torch.compile, so hook overhead and the
compiler's headroom are visible.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from cudaopt.models.hooks import CallTree, Captured, attribute
from cudaopt.models.specs import ArgSpec

Say = Callable[[str], None]


@dataclass
class ModuleStat:
    path: str  # "" is the whole model
    cls: str
    calls: float  # per forward
    self_ms: float  # per forward
    incl_ms: float
    self_share: float  # of the hooked forward; all self shares add up to 1
    incl_share: float
    inputs: list[ArgSpec] = field(default_factory=list)
    note: str | None = None  # why the inputs could not be recorded

    def input_label(self) -> str:
        return ", ".join(s.label() for s in self.inputs) if self.inputs else (self.note or "")


@dataclass
class ModelProfile:
    device: str
    device_name: str
    iters: int
    eager_ms: float  # whole forward, no hooks
    compile_ms: float | None  # whole forward under torch.compile, None if not asked
    hooked_ms: float  # whole forward with the hooks installed (what shares are of)
    modules: list[ModuleStat]
    kept: int = 0  # of the `iters` hooked forwards, those not disturbed (what shares are of)
    compile_error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def _tick(say: Say | None, label: str, done: int, total: int, started: float) -> None:
    """`label: 3/10, ~2 s left`: a line that shows long profiles are moving."""
    if say is None:
        return
    left_s = (time.perf_counter() - started) / max(done, 1) * (total - done)
    say(f"{label}: {done}/{total}" + (f", ~{left_s:.0f} s left" if done else ""))


def time_forward_ms(fn: Callable[[], Any], device: str, iters: int, say: Say | None = None,
                    label: str = "timing forwards") -> float:
    """Median wall time of `iters` synchronized calls."""
    times = []
    started = time.perf_counter()
    for i in range(iters):
        _tick(say, label, i, iters, started)
        sync(device)
        start = time.perf_counter()
        fn()
        sync(device)
        times.append((time.perf_counter() - start) * 1e3)
    return sorted(times)[len(times) // 2]


def capture(model: torch.nn.Module, inputs: list[Any], device: str,
            keep_args: Callable[[str], bool] | None = None) -> dict[str, Captured]:
    """One forward recording each module's first-call arguments."""
    with torch.no_grad(), CallTree(model, device, capture=True, keep_args=keep_args) as tree:
        model(*inputs)
    sync(device)
    return tree.captured


def profile_model(model: torch.nn.Module, inputs: list[Any], device: str, iters: int = 10,
                  compile: bool = True, say: Say | None = None) -> ModelProfile:
    say = say or (lambda message: None)
    with torch.no_grad():
        say("warming up and recording module inputs")
        captured = capture(model, inputs, device)
        eager_ms = time_forward_ms(lambda: model(*inputs), device, iters, say, "eager forwards")
        per_path, hooked_ms, kept = _attributed(model, inputs, device, iters, say)
        compile_ms, compile_error = None, None
        if compile:
            compile_ms, compile_error = _compiled_ms(model, inputs, device, iters, say)
    modules = _stats(model, per_path, captured, kept)
    name = torch.cuda.get_device_name() if device == "cuda" else "cpu"
    return ModelProfile(device, name, iters, eager_ms, compile_ms, hooked_ms, modules, kept,
                        compile_error)


def _attributed(model: torch.nn.Module, inputs: list[Any], device: str, iters: int,
                say: Say) -> tuple[dict[str, tuple[float, float, int]], float, int]:
    """Per-module times summed over the forwards that were not disturbed: a forward taking
    over 1.5x the median (another process took the machine) is left out."""
    runs = []
    started = time.perf_counter()
    for i in range(iters):
        _tick(say, "forwards, module by module", i, iters, started)
        with CallTree(model, device) as tree:
            model(*inputs)
        runs.append(attribute(tree.calls, tree.durations_ms()))
    totals = sorted(run[""][1] for run in runs)
    median = totals[len(totals) // 2]
    kept = [run for run in runs if run[""][1] <= 1.5 * median]
    summed: dict[str, tuple[float, float, int]] = {}
    for run in kept:
        for path, (s, t, n) in run.items():
            s0, t0, n0 = summed.get(path, (0.0, 0.0, 0))
            summed[path] = (s0 + s, t0 + t, n0 + n)
    return summed, median, len(kept)


def _compiled_ms(model: torch.nn.Module, inputs: list[Any], device: str, iters: int,
                 say: Say) -> tuple[float | None, str | None]:
    say("compiling the model (torch.compile; a minute or more for a large model)")
    try:
        compiled = torch.compile(model)
        for _ in range(2):
            compiled(*inputs)
        return time_forward_ms(lambda: compiled(*inputs), device, iters, say,
                               "compiled forwards"), None
    except Exception as exc:  # noqa: BLE001 - a model torch.compile rejects still profiles
        return None, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"


def _stats(model: torch.nn.Module, per_path: dict[str, tuple[float, float, int]],
           captured: dict[str, Captured], iters: int) -> list[ModuleStat]:
    total = per_path.get("", (0.0, 0.0, 0))[1] or 1e-12
    classes = {path: type(m).__name__ for path, m in model.named_modules()}
    stats = []
    for path, (self_ms, incl_ms, n) in per_path.items():
        got = captured.get(path, Captured())
        stats.append(ModuleStat(path, classes.get(path, "?"), n / iters, self_ms / iters,
                                incl_ms / iters, self_ms / total, incl_ms / total,
                                got.specs or [], got.error))
    stats.sort(key=lambda s: s.self_ms, reverse=True)
    return stats
