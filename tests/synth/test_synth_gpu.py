"""On a GPU: synthesized tasks keep eager times inside the default CUDA window, and each
passes `cudaopt check` with its identity candidate on the device."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.synth.conftest import manifest

pytestmark = pytest.mark.gpu


def test_cuda_tasks_land_in_the_window_and_pass_check(tmp_path) -> None:
    out = tmp_path / "tasks"
    done = subprocess.run([sys.executable, "-m", "cudaopt.cli", "synth", "--n", "3", "--out",
                           out, "--device", "cuda", "--seed", "3"], capture_output=True,
                          text=True, timeout=1800, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    kept = [line for line in manifest(out) if line["status"] == "kept"]
    assert len(kept) == 3 and all(1.0 <= line["eager_ms"] <= 100.0 for line in kept)
    for line in kept:
        folder = tmp_path / line["name"]
        folder.mkdir()
        source = (out / line["file"]).read_text()
        (folder / "model_new.py").write_text(re.sub(r"\bModel\b", "ModelNew", source))
        checked = subprocess.run([sys.executable, "-m", "cudaopt.cli", "check",
                                  out / line["file"], folder / "model_new.py", "--device",
                                  "cuda", "--allow", "*", "--no-profile"],
                                 capture_output=True, text=True, timeout=900, cwd=ROOT)
        assert checked.returncode == 0, checked.stdout + checked.stderr
