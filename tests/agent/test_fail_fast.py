"""`cudaopt optimize` refuses, before the first model call, what could never succeed: a task
the judge cannot load or run, a folder with no git repository to commit to, a CUDA session
on a machine without CUDA. Exit 2, a clear message, no run folder, nothing spent."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from cudaopt import ROOT
from cudaopt.cli import app
from tests.agent.conftest import MODEL
from tests.fakeopenai import FakeOpenAI

EXAMPLES = ROOT / "examples"
GOOD_TAIL = ("\ndef get_inputs():\n    return [torch.randn(8)]\n\n"
             "def get_init_inputs():\n    return []\n")
BAD_TASKS = {
    "empty": ("", "lacks Model, get_inputs, get_init_inputs"),
    "syntax": ("class Model(:\n", "syntax error at line 1"),
    "no_inputs": ("import torch\nclass Model(torch.nn.Module):\n    pass\n"
                  "def get_init_inputs():\n    return []\n", "lacks get_inputs"),
    "raises": ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
               "        return x.no_such_method()\n" + GOOD_TAIL, "no_such_method"),
}


def _optimize(task: Path, *extra: str) -> tuple[int, str, int]:
    """Exit code, output, and how many requests the model got."""
    with FakeOpenAI([]) as server:
        args = ["optimize", str(task), "--model", MODEL, "--api-base", server.url,
                "--sandbox", "none", *extra]
        result = CliRunner().invoke(app, args)
        return result.exit_code, " ".join(result.output.split()), len(server.requests)


def _no_runs(task: Path) -> bool:
    runs = task.parent / ".cudaopt" / "runs"
    return not runs.exists() or not any(runs.iterdir())


@pytest.mark.parametrize("name", BAD_TASKS)
def test_a_task_the_judge_cannot_use_stops_before_the_model_is_called(
        tmp_path: Path, name: str) -> None:
    source, message = BAD_TASKS[name]
    task = tmp_path / name / "model.py"
    task.parent.mkdir()
    task.write_text(source)
    code, out, requests = _optimize(task, "--device", "cpu", "--no-commit")
    assert code == 2, out
    assert message in out, out  # the whole reason, not a truncated one
    assert requests == 0 and _no_runs(task)


def test_no_repository_stops_before_the_run(tmp_path: Path) -> None:
    task = tmp_path / "model.py"
    shutil.copy(EXAMPLES / "fused_swish_cpu" / "model.py", task)
    code, out, requests = _optimize(task, "--device", "cpu")
    assert code == 2 and "not inside a git repository" in out and "--init-repo" in out, out
    assert requests == 0 and _no_runs(task)


def test_a_bad_branch_name_stops_before_the_run(tmp_path: Path) -> None:
    task = tmp_path / "model.py"
    shutil.copy(EXAMPLES / "fused_swish_cpu" / "model.py", task)
    code, out, requests = _optimize(task, "--device", "cpu", "--init-repo", "--branch", "a..b",
                                    "--max-steps", "1")
    assert code == 2 and "not a valid branch name" in out, out
    assert requests == 0


@pytest.mark.parametrize(("backend", "message"), [
    ("triton", "Triton kernels need a CUDA device and this run is on cpu"),
    ("rust", "flag --backend: 'rust' is not one of cuda, triton"),
])
def test_a_backend_the_device_cannot_run_stops_before_the_model_is_called(
        tmp_path: Path, backend: str, message: str) -> None:
    task = tmp_path / "model.py"
    shutil.copy(EXAMPLES / "fused_swish_cpu" / "model.py", task)
    code, out, requests = _optimize(task, "--device", "cpu", "--no-commit", "--backend", backend)
    assert code == 2 and message in out, out
    assert requests == 0 and _no_runs(task)


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_the_cuda_demo_without_a_gpu_says_so_at_once(tmp_path: Path) -> None:
    """The README's main command, on a machine with no GPU."""
    task = tmp_path / "fused_swish_cuda" / "model.py"
    task.parent.mkdir()
    shutil.copy(EXAMPLES / "fused_swish_cuda" / "model.py", task)
    replay = f"replay:{EXAMPLES / 'replay' / 'fused_swish_cuda.jsonl'}"
    result = CliRunner().invoke(app, ["optimize", str(task), "--model", replay, "--no-commit",
                                      "--sandbox", "none"])
    assert result.exit_code == 2 and "no CUDA device" in result.output, result.output
    assert _no_runs(task)
    result = CliRunner().invoke(app, ["optimize", str(task), "--model", replay, "--no-commit",
                                      "--sandbox", "none", "--device", "cuda"])
    assert result.exit_code == 2 and "no CUDA device" in result.output, result.output
