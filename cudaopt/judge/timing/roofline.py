"""How far a call is from the hardware's limit: bytes and FLOPs against the device's peaks.

The bytes a call must move at least are its inputs read once and its outputs written once;
the FLOPs are what PyTorch's FlopCounterMode attributes to the task's own operators
(matrix products, convolutions, attention; elementwise work counts zero). The roofline
bound is the larger of bytes / peak bandwidth and FLOPs / peak throughput, and a call's
distance to the limit is that bound as a share of its measured time: 85% means little is
left to gain, 9% that the kernel is far from what the device can do.

Peaks come from the vendor's data sheet for known GPUs (dense, no sparsity) and are
measured once otherwise (a device copy and a matrix product), cached per device and torch
version in the judge's cache folder; the report says which.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import torch
from torch.utils.flop_counter import FlopCounterMode

from cudaopt.judge.workers.tensors import flatten

T = 1e12
# name fragment -> (DRAM bytes/s, {dtype: FLOP/s}); first match wins, so specific first.
SHEET: list[tuple[str, float, dict[str, float]]] = [
    ("H200", 4.8e12, {"float32": 67 * T, "float16": 989.5 * T, "bfloat16": 989.5 * T,
                      "float64": 67 * T}),
    ("H100 PCIe", 2.0e12, {"float32": 51 * T, "float16": 756 * T, "bfloat16": 756 * T,
                           "float64": 51 * T}),
    ("H100 NVL", 3.9e12, {"float32": 60 * T, "float16": 835 * T, "bfloat16": 835 * T,
                          "float64": 60 * T}),
    ("H100", 3.35e12, {"float32": 67 * T, "float16": 989.5 * T, "bfloat16": 989.5 * T,
                       "float64": 67 * T}),
    ("A100-SXM4-80GB", 2.039e12, {"float32": 19.5 * T, "float16": 312 * T,
                                  "bfloat16": 312 * T, "float64": 19.5 * T}),
    ("A100 80GB PCIe", 1.935e12, {"float32": 19.5 * T, "float16": 312 * T,
                                  "bfloat16": 312 * T, "float64": 19.5 * T}),
    ("A100", 1.555e12, {"float32": 19.5 * T, "float16": 312 * T, "bfloat16": 312 * T,
                        "float64": 19.5 * T}),
    ("L40S", 864e9, {"float32": 91.6 * T, "float16": 362 * T, "bfloat16": 362 * T}),
    ("L4", 300e9, {"float32": 30.3 * T, "float16": 121 * T, "bfloat16": 121 * T}),
    ("RTX 4090", 1008e9, {"float32": 82.6 * T, "float16": 165.2 * T, "bfloat16": 165.2 * T}),
]


def device_peaks(device: torch.device, cache: Path) -> dict[str, Any]:
    """{"bandwidth_bps", "flops": {dtype: FLOP/s}, "source"} for this device."""
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else _cpu_name()
    for fragment, bandwidth, flops in SHEET:
        if device.type == "cuda" and fragment in name:
            return {"device": name, "bandwidth_bps": bandwidth, "flops": flops,
                    "source": f"data sheet ({fragment}, dense)"}
    key = f"{name}|{torch.__version__}|{torch.get_num_threads()} threads"
    known = _read(cache)
    if key not in known:
        known[key] = {"device": name, **_measure(device),
                      "source": f"measured here {time.strftime('%Y-%m-%d')}, cached",
                      "cache": str(cache)}
        _write(cache, known)
    return known[key]


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return "cpu: " + line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "cpu"


def _measure(device: torch.device) -> dict[str, Any]:
    """Best of a few large copies and matrix products: what this device reaches in practice."""
    cuda = device.type == "cuda"
    elements = (256 << 20) // 4 if cuda else (64 << 20) // 4
    src = torch.rand(elements, device=device)
    dst = torch.empty_like(src)
    copy_s = _best(lambda: dst.copy_(src), device)
    flops = {}
    n = 8192 if cuda else 1024
    for dtype in (torch.float32, torch.bfloat16, torch.float16) if cuda else (torch.float32,):
        a = torch.rand(n, n, device=device, dtype=dtype)
        flops[str(dtype).removeprefix("torch.")] = 2 * n**3 / _best(lambda a=a: a @ a, device)
    return {"bandwidth_bps": 2 * src.nbytes / copy_s, "flops": flops}


def _best(fn: Any, device: torch.device, repeats: int = 5) -> float:
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda *a: None)
    fn()
    sync(device)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        sync(device)
        best = min(best, time.perf_counter() - start)
    return best


def _read(cache: Path) -> dict[str, Any]:
    try:
        return json.loads(cache.read_text())
    except (OSError, ValueError):
        return {}


def _write(cache: Path, data: dict[str, Any]) -> None:
    cache.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    tmp.replace(cache)


def traits(model: Any, inputs: list[Any]) -> dict[str, Any]:
    """Bytes in and out, FLOPs of the task's own operators (one untimed call), the dtype."""
    counter = FlopCounterMode(display=False)
    try:
        with counter:
            out = model(*inputs)
        flops = int(counter.get_total_flops())
    except Exception:  # noqa: BLE001 - an operator the counter cannot follow: bytes only
        out, flops = model(*inputs), 0
    leaves = [t for _, t in flatten(out)[1]]
    tensors = [x for x in inputs if isinstance(x, torch.Tensor)] + leaves
    largest = max(tensors, key=lambda t: t.nbytes, default=None)
    return {"in_bytes": sum(x.nbytes for x in inputs if isinstance(x, torch.Tensor)),
            "out_bytes": sum(t.nbytes for t in leaves), "flops": flops,
            "dtype": str(largest.dtype).removeprefix("torch.") if largest is not None else ""}


def distance(task: dict[str, Any], peaks: dict[str, Any], ms: float) -> dict[str, Any]:
    """Achieved bandwidth and throughput of a call taking `ms`, and its share of the bound."""
    seconds = ms / 1e3
    moved = task["in_bytes"] + task["out_bytes"]
    memory_s = moved / peaks["bandwidth_bps"]
    peak_flops = peaks["flops"].get(task["dtype"])
    compute_s = task["flops"] / peak_flops if task["flops"] and peak_flops else 0.0
    bound_s = max(memory_s, compute_s)
    return {"ms": ms, "achieved_gbps": moved / seconds / 1e9,
            "achieved_tflops": task["flops"] / seconds / 1e12 if task["flops"] else None,
            "bound": "compute" if compute_s > memory_s else "memory",
            "bound_ms": bound_s * 1e3, "pct_of_roofline": 100 * bound_s / seconds}


def distances(traits: dict[str, Any], times: dict[str, Any], breakdown: dict[str, Any],
              label: str) -> dict[str, Any]:
    """Each contestant's call (`times`: warm, or cold where no warm figure exists) against
    the roofline; the candidate's kernel too, when it is the call's only kernel (then the
    call's bytes and FLOPs are all its own)."""
    task, peaks = traits["task"], traits["peaks"]
    found: dict[str, Any] = {"task": task, "peaks": peaks, "time": label}
    for name in ("eager", "compile", "candidate"):
        if times.get(f"{name}_ms"):
            found[name] = distance(task, peaks, times[f"{name}_ms"])
    cand = breakdown["candidate"]
    kernels = [e for e in cand["entries"] if e["ms"] > 0]
    if cand["unit"] == "kernel" and len(kernels) == 1 and round(kernels[0]["launches"]) == 1:
        found["kernel"] = {"name": kernels[0]["name"],
                           **distance(task, peaks, kernels[0]["ms"])}
    return found
