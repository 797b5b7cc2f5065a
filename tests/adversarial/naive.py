"""A deliberately naive harness: the judge cudaopt must not be, kept to prove the hacks work.

It does what many published harnesses did: one process for everything, a fixed seed (42),
the candidate guarded by replacing `torch.nn.functional` with functions that raise (CUDA
Agent's rule), outputs compared with `torch.allclose` after `.cpu()`, and eager and candidate
timed with `time.perf_counter` (CUDA events on a GPU) on the same inputs, after the
correctness trials. `--order ref_after` runs the reference after the candidate on the same
inputs instead of before it (the reference output is then freed before the candidate runs).

    python -m tests.adversarial.naive TASK CANDIDATE BUILD_DIR [--device cpu] [--order ...]

prints one JSON line: {"correct": bool, "clean": bool, "speedup": float}. Tests assert that
a hack passes `correct` and `clean` here; the speedup is for people (see `__main__`).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

SEED, TRIALS, TIMED = 42, 5, 20


class NaiveGuardTripped(RuntimeError):
    pass


@contextlib.contextmanager
def functional_guard() -> Iterator[None]:
    """CUDA Agent's guard: every torch.nn.functional function raises while it is active."""
    saved = {n: f for n, f in vars(F).items() if callable(f) and not n.startswith("_")}

    def tripped(*args: Any, **kwargs: Any) -> Any:
        raise NaiveGuardTripped("torch.nn.functional called")

    for name in saved:
        setattr(F, name, tripped)
    try:
        yield
    finally:
        for name, fn in saved.items():
            setattr(F, name, fn)


def _load(path: Path, name: str) -> Any:
    sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _inputs(task: Any, seed: int, device: str) -> list[Any]:
    torch.manual_seed(seed)
    return [x.to(device) for x in task.get_inputs()]


def _sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def _trial(model: Any, new: Any, inputs: list[Any], device: str, order: str) -> bool:
    if order == "ref_first":
        expected = model(*inputs).cpu()  # the device copy is freed before the candidate runs
    with functional_guard():
        out = new(*inputs)
    _sync(device)
    if order == "ref_after":
        expected = model(*inputs).cpu()
    return bool(torch.allclose(out.cpu(), expected, atol=1e-2, rtol=1e-2))


def _time(fn: Any, inputs: list[Any], device: str) -> float:
    for _ in range(3):
        fn(*inputs)
    _sync(device)
    if device == "cuda":
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(TIMED):
            fn(*inputs)
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / TIMED
    total = 0.0
    for _ in range(TIMED):
        t0 = time.perf_counter()
        fn(*inputs)
        total += time.perf_counter() - t0
    return total * 1e3 / TIMED


def run(task_path: Path, candidate: Path, build_dir: Path, device: str, order: str) -> dict:
    sys.path.insert(0, str(build_dir))
    task = _load(task_path, "naive_task")
    module = _load(candidate, "model_new")
    torch.set_grad_enabled(False)
    init = task.get_init_inputs()
    torch.manual_seed(SEED)
    model = task.Model(*init).to(device)
    new = module.ModelNew(*init).to(device)
    new.load_state_dict(model.state_dict())
    trials = [_inputs(task, SEED + t, device) for t in range(TRIALS)]  # drawn up front
    try:
        correct = all(_trial(model, new, inputs, device, order) for inputs in trials)
        clean = True
    except NaiveGuardTripped:
        correct = clean = False
    inputs = _inputs(task, SEED, device)
    speedup = _time(model, inputs, device) / max(_time(new, inputs, device), 1e-9)
    return {"correct": correct, "clean": clean, "speedup": speedup}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("task", type=Path)
    parser.add_argument("candidate", type=Path)
    parser.add_argument("build_dir", type=Path)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--order", choices=["ref_first", "ref_after"], default="ref_first")
    args = parser.parse_args()
    result = run(args.task, args.candidate, args.build_dir, args.device, args.order)
    print(json.dumps(result), flush=True)
    os._exit(0)  # like the judge's workers: no teardown of whatever the candidate left running


if __name__ == "__main__":
    main()
