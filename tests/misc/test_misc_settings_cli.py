"""The settings `cudaopt config` shows are the ones `check`, `verify` and `profile` use."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from cudaopt import ROOT
from cudaopt.cli import app

TASK = ROOT / "examples" / "fused_swish_cpu" / "model.py"


def test_verify_honours_cudaopt_toml(tmp_path: Path, home: Path) -> None:
    shutil.copy(TASK, tmp_path / "model.py")
    source = (tmp_path / "model.py").read_text().replace("class Model(", "class ModelNew(")
    (tmp_path / "model_new.py").write_text(source)  # PyTorch itself: allowed by the config
    (tmp_path / "cudaopt.toml").write_text('trials = 2\nallow = ["*"]\ndevice = "cpu"\n')
    out = tmp_path / "verdict.json"
    shown = CliRunner().invoke(app, ["config", str(tmp_path), "--json"])
    assert json.loads(shown.output)["trials"]["value"] == 2
    result = CliRunner().invoke(app, ["verify", str(tmp_path / "model.py"),
                                      str(tmp_path / "model_new.py"), "--json", str(out)])
    assert result.exit_code == 0, result.output
    verdict = json.loads(out.read_text())
    assert verdict["trials"] == 2 and verdict["device"] == "cpu" and verdict["correct"]
    flagged = CliRunner().invoke(app, ["verify", str(tmp_path / "model.py"),
                                       str(tmp_path / "model_new.py"), "--trials", "1",
                                       "--json", str(out)])
    assert flagged.exit_code == 0 and json.loads(out.read_text())["trials"] == 1  # flags win


def test_config_of_a_missing_path_fails(tmp_path: Path, home: Path) -> None:
    result = CliRunner().invoke(app, ["config", str(tmp_path / "nonexistent")])
    assert result.exit_code == 2 and "no such file or folder" in result.output


def test_a_bad_setting_for_check_is_exit_2(tmp_path: Path, home: Path) -> None:
    shutil.copy(TASK, tmp_path / "model.py")
    (tmp_path / "cudaopt.toml").write_text("trials = 0\n")
    result = CliRunner().invoke(app, ["check", str(tmp_path / "model.py"),
                                      str(tmp_path / "model_new.py")])
    assert result.exit_code == 2 and "trials" in result.output


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_check_on_cuda_without_a_gpu_names_no_empty_device(tmp_path: Path, home: Path) -> None:
    example = TASK.parent
    result = CliRunner().invoke(app, ["check", str(example / "model.py"),
                                      str(example / "model_new.py"), "--device", "cuda"])
    header = result.output.splitlines()[0]
    assert result.exit_code == 2 and header == "bad input  reward -1", result.output
    assert "no CUDA device" in result.output
