"""Per-operator factors that correct the roofline guess of `shapes.estimate_ms`, measured
once per device and torch version, then cached.

A byte and FLOP count is a fair guess for a GEMM, less so for `i0` or a cumulative product
on a CPU (thirty times slower than the bytes say). Each catalogue operator is timed alone
at two sizes from the cost table, one inside the device's caches and one beyond them (on
a CPU here SELU on 2 MB ran over 28 times faster per byte than on 64 MB); each factor is
measured time over guessed time, interpolated by bytes moved (`shapes.estimate_ms`).
Sizing then reads only the cache, so tasks stay a pure function of the seed on a machine,
while their eager time lands in the window far more often than a flat guess.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

from cudaopt.synth.catalog import rules, run_child
from cudaopt.synth.shapes import Composition, Step, Traced, estimate_ms, max_batch, trace

REFERENCE = {2: [1024], 3: [32, 256], 4: [16, 64, 64], 5: [8, 16, 16, 16]}
ARGS = {"out": 64, "groups": 4, "cols": 128, "dim": 1}
CLAMP = (0.05, 50.0)
CALIBRATE_TIMEOUT_S = 1800.0
#: Timing budget per operator and size: a factor only has to place a task within a window
#: twenty times wide, and a first `synth` on a machine waited two minutes for 338 timings
CALL_BUDGET_S = 0.1
VERSION = 4  # of the measurement: part of the cache key


def device_label(device: str) -> str:
    """What the factors belong to: the GPU's name, or the CPU's model and core count."""
    import torch

    if device.startswith("cuda"):
        return torch.cuda.get_device_name(torch.device(device))
    model = "cpu"
    if os.path.exists("/proc/cpuinfo"):
        for text in Path("/proc/cpuinfo").read_text().splitlines():
            if text.startswith("model name"):
                model = text.split(":", 1)[1].strip()
                break
    from cudaopt.synth.probe import CPU_THREADS

    return f"{model}, {CPU_THREADS} thread(s) of {len(os.sched_getaffinity(0))}"


def load_factors(catalog: list[dict[str, Any]], device: str,
                 cache_dir: Path) -> dict[str, list[float]]:
    import torch

    key = json.dumps([VERSION, device_label(device), torch.__version__, rules()["cost"],
                      [op["id"] for op in catalog]])
    path = cache_dir / f"factors-{hashlib.sha256(key.encode()).hexdigest()[:16]}.json"
    if not path.is_file():
        cache_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as scratch:
            listed = Path(scratch) / "catalog.json"
            listed.write_text(json.dumps(catalog))
            run_child(["cudaopt.synth.calibrate", device, str(listed),
                       str(path.with_suffix(".tmp"))], CALIBRATE_TIMEOUT_S, scratch)
        path.with_suffix(".tmp").replace(path)
    return json.loads(path.read_text())


def measure(catalog: list[dict[str, Any]], device: str) -> dict[str, list[float]]:
    """Per operator, [factor in cache, factor out of cache] at the cost table's two sizes."""
    import torch

    from cudaopt.synth.probe import CPU_THREADS

    if device == "cpu":
        torch.set_num_threads(CPU_THREADS)
    warnings.simplefilter("ignore")  # layers that find unbatched inputs say so, harmlessly
    ops, cost = {op["id"]: op for op in catalog}, rules()["cost"][device[:4]]
    factors: dict[str, list[float]] = {}
    for index, op in enumerate(catalog):
        rank = next(r for r in op["ranks"] if r >= 2)
        comp = Composition([Step(op["id"], dict(ARGS))], [1, *REFERENCE[rank]])
        try:
            factors[op["id"]] = [_factor(comp, ops, moved, cost, device, f"{index}_{moved}")
                                 for moved in cost["calibrate_bytes"]]
        except Exception:  # noqa: BLE001 - an operator that fails here keeps factor 1
            continue
    return factors


def _factor(comp: Composition, ops: dict[str, dict[str, Any]], moved: int,
            cost: dict[str, Any], device: str, tag: str) -> float:
    import torch

    from cudaopt.synth.codegen import render
    from cudaopt.synth.probe import draw_inputs, load_task, time_ms

    traced = _sized(comp, ops, moved, max_batch(cost))
    path = Path(f"calibrate_{tag}.py")
    path.write_text(render(traced, comp.steps[0].op))
    task = load_task(path)
    with torch.device(device):
        model = task.Model(*task.get_init_inputs()).to(device)
    inputs = draw_inputs(task, 0, torch.device(device))
    with torch.no_grad():
        model(*inputs)
        ms = time_ms(model, inputs, torch.device(device), CALL_BUDGET_S)
    guess = estimate_ms(traced, cost, {}) - cost["op_ms"]
    factor = max(ms - cost["op_ms"], 1e-4) / max(guess, 1e-6)
    return min(max(factor, CLAMP[0]), CLAMP[1])


def _sized(comp: Composition, ops: dict[str, dict[str, Any]], moved: int,
           largest: int) -> Traced:
    batch = 1
    while trace(comp, ops, batch).bytes < moved and batch < largest:
        batch *= 2
    return trace(comp, ops, batch)


if __name__ == "__main__":
    device_arg, catalog_path, out_path = sys.argv[1:]
    found = measure(json.loads(Path(catalog_path).read_text()), device_arg)
    Path(out_path).write_text(json.dumps(found, indent=1, sort_keys=True))
