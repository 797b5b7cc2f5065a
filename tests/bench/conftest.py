"""A small suite of CPU tasks with one candidate of each kind: honestly faster (the
prefix-sum C++ kernel, a win by less work: see tests/agent/conftest.py), wrong (an unwritten
output), hanging, failing to build, and missing; and the helpers to run `cudaopt bench` on
it as a real subprocess, as a user would."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

DATA = Path(__file__).parent / "data"
PREFIX_SUM = ROOT / "examples" / "prefix_sum_cpu"
SWISH = ROOT / "tests" / "judge" / "zoo" / "task.py"
TASKS = {"level1/1_prefix_sum": PREFIX_SUM / "model.py", "level1/2_swish_wrong": SWISH,
         "level1/3_swish_hang": SWISH, "level2/4_swish_build": SWISH,
         "level2/5_swish_missing": SWISH}
#: cheap judge settings; the hang is killed after --timeout seconds
FAST = ["--device", "cpu", "--sandbox", "none", "--trials", "2", "--time-budget", "2",
        "--timeout", "10"]


def make_suite(root: Path) -> Path:
    for task_id, source in TASKS.items():
        path = root / "suite" / f"{task_id}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, path)
    return root / "suite"


def make_candidates(root: Path) -> Path:
    """The folder-per-task layout: DIR/<task stem>/model_new.py (+ kernels/)."""
    folder = root / "candidates"
    shutil.copytree(DATA / "candidates", folder)
    shutil.copytree(PREFIX_SUM / "kernels", folder / "1_prefix_sum" / "kernels")
    shutil.copy(PREFIX_SUM / "model_new.py", folder / "1_prefix_sum" / "model_new.py")
    return folder


def bench(*args: str | Path, timeout: float = 900, cwd: Path | None = None,
          env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`cudaopt bench …` as a subprocess: output captured, never a terminal."""
    full_env = {**os.environ, "COLUMNS": "80", **(env or {})}
    return subprocess.run([sys.executable, "-m", "cudaopt.cli", "bench", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, cwd=cwd or ROOT,
                          env=full_env)


def lines(bench_dir: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for text in (bench_dir / "results.jsonl").read_text().splitlines():
        line = json.loads(text)
        assert line["task"] not in out, f"{line['task']} has two lines"
        out[line["task"]] = line
    return out


@pytest.fixture(scope="package")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_suite(tmp_path_factory.mktemp("suite"))


@pytest.fixture(scope="package")
def candidates(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_candidates(tmp_path_factory.mktemp("cands"))


@pytest.fixture(scope="package")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One build folder for every bench of the package: a candidate is built once."""
    return tmp_path_factory.mktemp("work")
