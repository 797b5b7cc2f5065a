"""Child process that puts one task file through the filters:
`python -m cudaopt.synth.probe`, then one JSON line on stdin: `task`, `result`, `log`,
`device`, `window_ms`. It is started ahead of its task (see `evaluate.Prober`): torch's
and torch.compile's imports, 13 s on an H200 host, happen while the previous task runs.

The task is built and called the way the judge's reference worker does it (fixed init
seed, inputs drawn from `get_inputs()` on the device under a seed). The filters run
cheapest first and stop at the first that fails; `RESULT` (JSON) is rewritten as each
begins, so when a task crashes or hangs the process, the parent still knows which filter
it was in. Runs in a child because a composition, or a model's code, may do either.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import torch

from cudaopt.judge import kept_vec_isa, outputs_vary, prewarm_compile

#: The judge's default tolerance: what "eager and compile agree" and "the output varies"
#: are measured against, so a kept task is one the judge can tell apart and verify.
ATOL = RTOL = 1e-2
INIT_SEED, INPUT_SEEDS = 0, (1, 2, 3)
#: On a CPU, tasks are timed on one thread: on a shared machine a multi-threaded region
#: waits whole scheduler ticks for its slowest thread, which scatters eager times tenfold.
CPU_THREADS = 1
TIME_BUDGET_S, MAX_CALLS = 0.5, 20


def load_task(path: Path) -> Any:
    """Import a task file, never through a cached .pyc: a later task may reuse the name
    within the second that the cache's timestamp resolves."""
    sys.dont_write_bytecode = True
    sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location("cudaopt_synth_task", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def draw_inputs(task: Any, seed: int, device: torch.device, reseed: bool = True) -> list[Any]:
    """Inputs under `seed`; with `reseed=False` the random state is put back afterwards, so
    randomness in `forward` shows up as a difference between two calls."""
    with contextlib.ExitStack() as stack:
        if not reseed:
            stack.enter_context(torch.random.fork_rng(
                devices=[device] if device.type == "cuda" else []))
        torch.manual_seed(seed)
        with torch.device(device):
            inputs = list(task.get_inputs())
    return [x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs]


def _leaves(out: Any) -> list[torch.Tensor]:
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        return [leaf for item in out for leaf in _leaves(item)]
    if isinstance(out, dict):
        return [leaf for key in sorted(out) for leaf in _leaves(out[key])]
    return []


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def time_ms(fn: Any, inputs: list[Any], device: torch.device,
            budget_s: float = TIME_BUDGET_S) -> float:
    times: list[float] = []
    spent = time.perf_counter()
    while len(times) < 3 or (len(times) < MAX_CALLS
                             and time.perf_counter() - spent < budget_s):
        _sync(device)
        start = time.perf_counter()
        fn(*inputs)
        _sync(device)
        times.append((time.perf_counter() - start) * 1e3)
    return min(times)  # the least disturbed call: other work on the machine only adds


def _shapes(inputs: list[Any], out: Any) -> dict[str, Any]:
    def describe(x: Any) -> Any:
        return list(x.shape) if isinstance(x, torch.Tensor) else repr(x)

    return {"inputs": [describe(x) for x in inputs], "outputs": [describe(t) for t in
                                                                 _leaves(out)]}


def run(task_path: Path, device: torch.device, window_ms: tuple[float, float],
        enter: Any) -> dict[str, Any]:
    """The filters in order; returns the fields for the manifest (`status` among them)."""
    found: dict[str, Any] = {}
    enter("runs_eager")
    task = load_task(task_path)
    torch.manual_seed(INIT_SEED)
    with torch.device(device):
        model = task.Model(*task.get_init_inputs()).to(device)
    inputs = draw_inputs(task, INPUT_SEEDS[0], device)
    with torch.no_grad():
        first = model(*inputs)
        found["shapes"] = _shapes(inputs, first)
        leaves = _leaves(first)
        enter("finite")
        if not leaves or not all(t.is_floating_point() and bool(torch.isfinite(t).all())
                                 for t in leaves):
            return {**found, "status": "finite"}
        enter("deterministic")  # same inputs, the random state left as the first call left it
        again = _leaves(model(*draw_inputs(task, INPUT_SEEDS[0], device, reseed=False)))
        if len(again) != len(leaves) or not all(map(torch.equal, leaves, again)):
            return {**found, "status": "deterministic"}
        enter("input_dependent")
        outputs = [first] + [model(*draw_inputs(task, s, device)) for s in INPUT_SEEDS[1:]]
        if not outputs_vary(outputs, atol=ATOL, rtol=RTOL):
            return {**found, "status": "input_dependent"}
        enter("eager_window")
        found["eager_ms"] = time_ms(model, inputs, device)
        if not window_ms[0] <= found["eager_ms"] <= window_ms[1]:
            return {**found, "status": "eager_window"}
        enter("runs_compiled")
        compiled = torch.compile(model)
        with kept_vec_isa():
            result = _leaves(compiled(*inputs))
        enter("agrees")
        if len(result) != len(leaves) or not all(
                a.shape == b.shape and torch.allclose(a, b, atol=ATOL, rtol=RTOL)
                for a, b in zip(result, leaves, strict=False)):
            return {**found, "status": "agrees"}
        found["compile_ms"] = time_ms(compiled, inputs, device)
    return {**found, "status": "kept"}


def main() -> None:
    prewarm_compile()
    job = json.loads(sys.stdin.readline() or "{}")
    if not job:
        return  # the run ended before a task came
    with open(job["log"], "ab") as log:  # what the task prints goes to its own log
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
    device = torch.device(job["device"])
    if device.type == "cpu":
        torch.set_num_threads(CPU_THREADS)
    result_path = Path(job["result"])
    state: dict[str, Any] = {"phase": None}

    def enter(phase: str) -> None:
        state["phase"] = phase
        result_path.write_text(json.dumps(state))

    try:
        state.update(run(Path(job["task"]), device, tuple(job["window_ms"]), enter))
    except Exception as exc:  # noqa: BLE001 - a failure is the current filter's verdict
        state["status"] = state["phase"]
        state["error"] = f"{type(exc).__name__}: {exc}"[-2000:]
    result_path.write_text(json.dumps(state))


if __name__ == "__main__":
    main()
