"""`cudaopt profile --ncu`: Nsight Compute's view of the candidate's kernels, where permitted.

Runs the candidate once under `ncu` in a process of its own (`ncu_target`), after the judge
has verified and timed it: nothing here feeds the verdict's figures or the reward. A few
metrics per kernel: achieved occupancy, memory and compute throughput (% of peak), and the
stall reason that costs most cycles per issued instruction.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

OCCUPANCY = "sm__warps_active.avg.pct_of_peak_sustained_active"
MEMORY = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
COMPUTE = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
STALLS = r"regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
NO_PERMISSION = "ERR_NVGPUCTRPERM"
RANGE = "cudaopt_candidate"


def unavailable(device: str) -> str | None:
    """Why `--ncu` cannot run here, or None."""
    if device != "cuda":
        return "not run: --ncu needs a CUDA device (this check ran on the CPU)"
    if shutil.which("ncu") is None:
        return ("not run: Nsight Compute (`ncu`) is not on PATH; it ships with the CUDA "
                "toolkit (e.g. /usr/local/cuda/bin/ncu) or as the nsight-compute package")
    return None


def run(task: Path, candidate: Path, build_dir: Path | None, timeout_s: float = 600.0
        ) -> dict[str, Any]:
    """{"available": True, "kernels": [...]} or {"available": False, "reason": ...}; without
    the stall metrics when this ncu does not know them."""
    found: dict[str, Any] = {}
    for metrics in ((OCCUPANCY, MEMORY, COMPUTE, STALLS), (OCCUPANCY, MEMORY, COMPUTE)):
        found = _attempt(metrics, task, candidate, build_dir, timeout_s)
        if found["available"] or "not permitted" in found["reason"]:
            break
    return found


def _attempt(metrics: tuple[str, ...], task: Path, candidate: Path, build_dir: Path | None,
             timeout_s: float) -> dict[str, Any]:
    argv = ["ncu", "--csv", "--page", "raw", "--nvtx", "--nvtx-include", f"{RANGE}/",
            "--metrics", ",".join(metrics),
            sys.executable, "-m", "cudaopt.judge.insight.ncu_target", str(task.resolve()),
            str(candidate.resolve()), str(build_dir or "")]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s,
                              env={**os.environ, "PYTHONUNBUFFERED": "1"})
    except subprocess.TimeoutExpired:
        return {"available": False, "reason": f"not run: ncu took over {timeout_s:.0f} s"}
    text = proc.stdout + proc.stderr
    if NO_PERMISSION in text:
        return {"available": False, "reason": (
            "not permitted: this user may not read the GPU's performance counters "
            "(ERR_NVGPUCTRPERM); run as root or set the driver option "
            "NVreg_RestrictProfilingToAdminUsers=0")}
    kernels = parse(proc.stdout)
    if proc.returncode != 0 or not kernels:
        tail = "\n".join(text.strip().splitlines()[-6:])
        return {"available": False, "reason": f"ncu failed (exit {proc.returncode}): {tail}"}
    return {"available": True, "kernels": kernels}


def parse(stdout: str) -> list[dict[str, Any]]:
    """Rows of `ncu --csv --page raw` (a header, a units row, one row per kernel)."""
    start = stdout.find('"ID"')
    if start < 0:
        return []
    lines = [line for line in stdout[start:].splitlines() if line.startswith('"')]
    rows = list(csv.DictReader(io.StringIO("\n".join(lines))))
    kernels = []
    for row in rows[1:]:  # rows[0] holds the units
        stalls = {k: _number(v) for k, v in row.items()
                  if k and k.startswith("smsp__average_warps_issue_stalled_")}
        top = max(stalls, key=lambda k: stalls[k] or 0.0, default="")
        reason = top.removeprefix("smsp__average_warps_issue_stalled_").split("_per_issue")[0]
        kernels.append({"name": row.get("Kernel Name", "?")[:200],
                        "occupancy": _pct(row.get(OCCUPANCY)), "memory": _pct(row.get(MEMORY)),
                        "compute": _pct(row.get(COMPUTE)),
                        "stall": f"{reason} ({stalls[top]:.2f} cycles/instr)" if top else "-"})
    return kernels


def _number(text: str | None) -> float | None:
    try:
        return float((text or "").replace(",", ""))
    except ValueError:
        return None


def _pct(text: str | None) -> str:
    value = _number(text)
    return "-" if value is None else f"{value:.0f}%"
