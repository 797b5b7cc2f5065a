"""`cudaopt synth` as a real subprocess, as a user runs it, with a CPU window of a few ms
so each kept task costs seconds; and one small run the tests share."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

#: eager time per call, ms: so wide that no task falls out of it, however loaded the
#: machine, so runs with one seed keep the same tasks (sizing still aims at ~1 ms)
WINDOW = "0.0001,10000"
SEED = 7


def synth(*args: str | Path, timeout: float = 900,
          env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "80", **(env or {})}
    return subprocess.run([sys.executable, "-m", "cudaopt.cli", "synth", "--device", "cpu",
                           *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env=env)


def manifest(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(t) for t in (folder / "manifest.jsonl").read_text().splitlines()]


def task_files(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(folder.glob("*.py"))}


@pytest.fixture(scope="package")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """Two tasks, seed 7: the folder and what the command printed."""
    out = tmp_path_factory.mktemp("synth") / "tasks"
    done = synth("--n", "2", "--out", out, "--seed", SEED, "--eager-ms", WINDOW)
    assert done.returncode == 0, done.stdout + done.stderr
    return out, done.stdout
