"""On a CUDA machine: the shipped KernelBench-format suite (both candidate layouts) judged on
every local GPU, one slot per GPU, every candidate correct, each line naming its GPU and the
CPU its slot timed from."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tests.bench.conftest import bench, lines
from tests.conftest import ROOT

SUITE = ROOT / "benchmarks" / "suite"


@pytest.mark.gpu
def test_the_suite_on_every_gpu(tmp_path: Path) -> None:
    out = tmp_path / "b"
    proc = bench(SUITE / "level1", SUITE / "level2", "--candidates", SUITE / "candidates",
                 "--device", "cuda", "--out", out, "--sandbox", "none", timeout=1800)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = lines(out)
    assert len(got) == 5
    slots = {f"cuda:{i}" for i in range(torch.cuda.device_count())}
    for line in got.values():
        assert line["infra_status"] == "ok" and line["correct"], line
        assert line["slot"] in slots and line["device_name"].startswith("NVIDIA")
        assert line["speedup_vs_compile"] is not None
    # each GPU's slot times from a CPU of its own, which no other slot ever uses
    cpus = {line["slot"]: set() for line in got.values()}
    for line in got.values():
        cpus[line["slot"]].add(line["timing_cpu"])
    assert all(len(found) == 1 and None not in found for found in cpus.values()), cpus
    assert len(set.union(*cpus.values())) == len(cpus), cpus
    assert got["level2/1_Scale_Bias_ReLU"]["candidate"].endswith(
        "level_2_problem_1_sample_0_kernel.py")
