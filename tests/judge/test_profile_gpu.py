"""Where the time goes and the distance to the limit, on a CUDA device."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from cudaopt.judge import JudgeOptions, Status, Verdict, check, gpu_identity, gpu_lock

from ..conftest import EXAMPLES

pytestmark = pytest.mark.gpu
SWISH = EXAMPLES / "fused_swish_cuda"
COPY_ELEMENTS = 64 << 20  # 256 MiB of float32: far beyond the L2 cache
COPY_TASK = f'''
import torch
import torch.nn as nn


class Model(nn.Module):
    """A plain copy: one read and one write of every byte."""

    def forward(self, x):
        return x.clone()


def get_inputs():
    return [torch.rand({COPY_ELEMENTS})]


def get_init_inputs():
    return []
'''


@pytest.fixture(scope="module")
def swish() -> Verdict:
    verdict = check(SWISH / "model.py", SWISH / "model_new.py",
                    JudgeOptions(device="cuda", time_budget_s=5.0))
    assert verdict.status is Status.OK, verdict.error or verdict.violations
    return verdict


def test_breakdown_of_the_cuda_example(swish: Verdict) -> None:
    kernel = re.search(r"__global__ void (\w+)",
                       (SWISH / "kernels" / "fused_swish.cu").read_text()).group(1)
    breakdown = swish.breakdown
    assert set(breakdown) == {"eager", "compile", "candidate"}
    for part in breakdown.values():
        assert part["unit"] == "kernel" and part["entries"] and part["summed_ms"] > 0
        assert part["summed_ms"] + part["gap_ms"] == pytest.approx(part["call_ms"])
    candidate = breakdown["candidate"]["entries"]
    assert any(kernel in e["name"] for e in candidate), [e["name"] for e in candidate]
    assert [e["launches"] for e in candidate if kernel in e["name"]] == [1.0]
    assert breakdown["eager"]["launches"] >= 4  # sigmoid, mul, mul/add, clamp: unfused
    assert swish.warm["kernel_ms"]["candidate"] > 0
    assert swish.warm["candidate_ms"] > 0 and swish.warm["speedup_vs_compile"] > 0
    assert 0 < swish.roofline["candidate"]["pct_of_roofline"] < 150
    assert kernel in swish.roofline["kernel"]["name"]


def _event_copy_gbps(elements: int, repeats: int = 20, tries: int = 5) -> float:
    """A plain copy of the same bytes, timed with events over back-to-back repeats, in the
    GPU's turn as the judge times: other tests' judgements share the GPU under xdist. The
    best of `tries`: other tests' work outside a judge's turn (their own copies, digests)
    still shares the memory bus, and it only ever lowers a bandwidth (2696 GB/s against the
    judge's 2990 beside seven other test processes on an H100, 2026-12-06)."""
    with gpu_lock(gpu_identity(torch.cuda.current_device())):
        return max(_copy_gbps(elements, repeats) for _ in range(tries))


def _copy_gbps(elements: int, repeats: int) -> float:
    x = torch.rand(elements, device="cuda")
    y = torch.empty_like(x)
    y.copy_(x)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(repeats):
        y.copy_(x)
    end.record()
    torch.cuda.synchronize()
    seconds = start.elapsed_time(end) / 1e3 / repeats
    return 2 * x.nbytes / seconds / 1e9


def test_copy_bandwidth_matches_an_independent_measurement(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text(COPY_TASK)
    (tmp_path / "model_new.py").write_text(COPY_TASK.replace("class Model(", "class ModelNew("))
    verdict = check(tmp_path / "model.py", tmp_path / "model_new.py",
                    JudgeOptions(device="cuda", allow=["*"], time_budget_s=5.0))
    assert verdict.status is Status.OK, verdict.error or verdict.violations
    roof = verdict.roofline
    assert roof["task"]["in_bytes"] == roof["task"]["out_bytes"] == 4 * COPY_ELEMENTS
    assert roof["candidate"]["bound"] == "memory"
    measured = _event_copy_gbps(COPY_ELEMENTS)
    reported = roof["candidate"]["achieved_gbps"]
    assert reported == pytest.approx(measured, rel=0.10), (reported, measured)
    if "kernel" in roof:
        assert roof["kernel"]["achieved_gbps"] == pytest.approx(measured, rel=0.10)
    peak = roof["peaks"]["bandwidth_bps"] / 1e9
    assert roof["candidate"]["pct_of_roofline"] == pytest.approx(100 * reported / peak)


@pytest.mark.skipif(shutil.which("ncu") is None, reason="Nsight Compute (ncu) not installed")
def test_ncu_profiles_the_candidate_kernel_or_says_why_not(tmp_path: Path) -> None:
    out = tmp_path / "verdict.json"
    proc = subprocess.run(
        [sys.executable, "-m", "cudaopt.cli", "profile", str(SWISH / "model.py"),
         str(SWISH / "model_new.py"), "--device", "cuda", "--ncu", "--json", str(out)],
        capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    found = json.loads(out.read_text())["ncu"]
    if not found["available"]:
        assert "not permitted" in found["reason"], found["reason"]
        return
    names = [k["name"] for k in found["kernels"]]
    assert any("fused_swish_kernel" in n for n in names), names
    assert "Nsight Compute" in proc.stdout
