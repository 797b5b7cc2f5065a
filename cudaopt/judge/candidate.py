"""The candidate worker: imports `model_new.py` and runs `ModelNew` under the judge's rules.

Everything it reports about correctness is raw output bytes for the reference worker to
compare; it never sees a reference output, so it cannot copy one. What it checks itself
(operators, threads, input mutation, tampering) uses functions captured before import.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

import torch

from cudaopt.judge import tensors, timing
from cudaopt.judge.guard import OpGuard, TamperCheck
from cudaopt.judge.worker import build_model, load_module

_perf = time.perf_counter
_threads = threading.enumerate
_equal = torch.equal


class CandidateWorker:
    def __init__(self) -> None:
        self.task: Any = None
        self.model: Any = None
        self.device = torch.device("cpu")
        self.allow: list[str] = []
        self.timer: timing.CallTimer | None = None
        self.tamper: TamperCheck | None = None
        self.threads: set[threading.Thread] = set()
        self.kept: list[tuple[int, Any]] = []

    def handlers(self) -> dict[str, Any]:
        return {"load": self.load, "run": self.run, "time": self.time, "dump": self.dump,
                "exit": lambda cmd: {}}

    def load(self, cmd: dict[str, Any]) -> dict[str, Any]:
        self.device = torch.device(cmd["device"])
        self.allow = cmd["allow"]
        self.timer = timing.CallTimer(self.device)
        judged = [self.run, self.time, self.dump, self._call, self._checks, tensors.draw_inputs,
                  tensors.write_outputs, tensors.flatten, timing.CallTimer.time]
        self.tamper = TamperCheck(f.__func__ if hasattr(f, "__func__") else f for f in judged)
        self.task = load_module(Path(cmd["task"]), "cudaopt_task")
        init_inputs = list(self.task.get_init_inputs())
        if cmd.get("build_dir"):
            sys.path.insert(0, cmd["build_dir"])
        start = _perf()
        try:
            module = load_module(Path(cmd["candidate"]), "model_new")
        except Exception as exc:
            failed_build = "Error building extension" in str(exc)
            return {"ok": False, "kind": "build" if failed_build else "import",
                    "error": _short_error(exc)}
        import_s = _perf() - start
        model = build_model(module.ModelNew, init_inputs, cmd["init_seed"], self.device)
        state = torch.load(cmd["state_path"], map_location=self.device, weights_only=True)
        try:
            model.load_state_dict(state, strict=True)
        except RuntimeError as exc:
            return {"ok": False, "kind": "state_dict", "error": _state_dict_message(exc)}
        self.model = model
        self.threads = set(_threads())
        return {"import_s": import_s, "violations": self.tamper.violations()}

    def _call(self, inputs: list[Any], guard: OpGuard | None) -> tuple[float, float, Any]:
        if guard is None:
            return self.timer.time(self.model, inputs)
        with guard:
            return self.timer.time(self.model, inputs)

    def _checks(self, inputs: list[Any], before: list[Any] | None) -> list[str]:
        found = self.tamper.violations()
        extra = [t for t in _threads() if t not in self.threads and t.is_alive()]
        if extra:
            found.append(f"background thread still running after forward: {extra[0].name}")
        for i, (now, then) in enumerate(zip(inputs, before or [], strict=False)):
            if isinstance(now, torch.Tensor) and not _equal(now, then):
                found.append(f"candidate modified input {i} in place")
        return found

    def run(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """One verification trial: fresh inputs, poisoned memory, guarded call."""
        inputs = tensors.draw_inputs(self.task, cmd["seed"], self.device)
        before = tensors.clone_inputs(inputs)
        _poison(cmd.get("poison", []), self.device)
        guard = OpGuard(self.allow)
        _, _, out = self._call(inputs, guard)
        found = guard.violations() + self._checks(inputs, before)
        try:
            manifest = tensors.write_outputs(out, Path(cmd["out_dir"]), cmd["tag"])
        except TypeError as exc:
            return {"violations": found + [f"output not accepted: {exc}"], "manifest": None}
        return {"violations": found, "manifest": manifest}

    def time(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """A timing round. Guarded and checked calls are secretly mixed in, so a candidate
        cannot behave one way when verified and another when timed."""
        ms, host, guards = [], [], []
        self.kept = []
        for call in cmd["calls"]:
            inputs = tensors.draw_inputs(self.task, call["seed"], self.device)
            guard = OpGuard(self.allow) if call["guard"] else None
            dev_ms, host_ms, out = self._call(inputs, guard)
            if guard is not None:
                guards.append(guard)
            else:
                ms.append(dev_ms)
                host.append(host_ms)
            if call["check"]:
                self.kept.append((call["seed"], out))
            del out, inputs
        found = [v for g in guards for v in g.violations()] + self._checks([], None)
        return {"ms": ms, "host_ms": host, "kept": len(self.kept), "violations": found}

    def dump(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Write the outputs kept from the last timing round, outside its wall-clock span."""
        checked, found = [], []
        for i, (seed, out) in enumerate(self.kept):
            try:
                manifest = tensors.write_outputs(out, Path(cmd["out_dir"]), f"t{i}")
            except TypeError as exc:
                found.append(f"output not accepted on a timed call: {exc}")
                continue
            checked.append({"seed": seed, "manifest": manifest})
        self.kept = []
        return {"checked": checked, "violations": found}


def _poison(leaves: list[dict[str, Any]], device: torch.device) -> None:
    """Fill and free blocks the size of each expected output, so an output buffer the
    candidate allocates but never writes holds NaN (or extreme integers), not stale data."""
    for leaf in leaves:
        dtype = getattr(torch, leaf["dtype"].removeprefix("torch."))
        block = torch.empty(leaf["numel"], dtype=dtype, device=device)
        if dtype.is_floating_point or dtype.is_complex:
            block.fill_(float("nan"))
        elif dtype != torch.bool:
            block.fill_(torch.iinfo(dtype).max)
        del block


def _short_error(exc: BaseException) -> str:
    import traceback

    return "".join(traceback.format_exception(exc))[-6000:]


def _state_dict_message(exc: RuntimeError) -> str:
    return ("ModelNew's parameters and buffers must match Model's so the reference weights load "
            f"(load_state_dict strict=True): {exc}")
