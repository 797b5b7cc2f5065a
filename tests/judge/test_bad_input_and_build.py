"""Bad input gets a clear error; builds fail cleanly and stay incremental."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cudaopt.judge import JudgeOptions, Status, check
from cudaopt.judge.building.kernels import build_kernels

ZOO = Path(__file__).parent / "zoo"
OPTS = JudgeOptions(device="cpu", profile=False)


@pytest.mark.parametrize(("source", "needle"), [
    ("import torch\ndef get_inputs(): return []\ndef get_init_inputs(): return []\n",
     "lacks Model"),
    ("class Model(:\n", "syntax error at line 1"),
    ("class Model: pass\ndef get_init_inputs(): return []\n", "lacks get_inputs"),
])
def test_bad_task_files_are_rejected_before_running(tmp_path: Path, source: str,
                                                    needle: str) -> None:
    task = tmp_path / "model.py"
    task.write_text(source)
    verdict = check(task, ZOO / "correct.py", OPTS)
    assert verdict.status is Status.BAD_INPUT and verdict.exit_code == 2
    assert needle in verdict.error


def test_missing_files_and_candidates_without_modelnew(tmp_path: Path) -> None:
    assert "not found" in check(tmp_path / "nope.py", ZOO / "correct.py", OPTS).error
    cand = tmp_path / "model_new.py"
    cand.write_text("class Model: pass\n")
    verdict = check(ZOO / "task.py", cand, OPTS)
    assert verdict.status is Status.BAD_INPUT and "lacks class ModelNew" in verdict.error


def test_cuda_requested_without_a_gpu_is_bad_input() -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    proc = subprocess.run(
        [sys.executable, "-m", "cudaopt.cli", "check", str(ZOO / "task.py"),
         str(ZOO / "correct.py"), "--device", "cuda"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "no CUDA device" in proc.stdout + proc.stderr


def test_task_that_fails_itself_is_blamed_on_the_task(tmp_path: Path) -> None:
    task = tmp_path / "model.py"
    task.write_text(
        "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
        "        raise ValueError('broken task')\n"
        "def get_inputs(): return [torch.randn(2)]\ndef get_init_inputs(): return []\n")
    cand = tmp_path / "model_new.py"
    cand.write_text("import torch\nclass ModelNew(torch.nn.Module):\n"
                    "    def forward(self, x): return x\n")
    verdict = check(task, cand, OPTS)
    assert verdict.status is Status.BAD_INPUT
    assert "the task itself failed" in verdict.error and "broken task" in verdict.error


def test_a_task_out_of_device_memory_says_so(tmp_path: Path) -> None:
    """Three processes share one device: running out is named, not a bare traceback."""
    task = tmp_path / "model.py"
    task.write_text(
        "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
        "        raise torch.OutOfMemoryError('CUDA out of memory. Tried to allocate 6.00 GiB')\n"
        "def get_inputs(): return [torch.randn(2)]\ndef get_init_inputs(): return []\n")
    cand = tmp_path / "model_new.py"
    cand.write_text("import torch\nclass ModelNew(torch.nn.Module):\n"
                    "    def forward(self, x): return x\n")
    verdict = check(task, cand, OPTS)
    assert verdict.status is Status.BAD_INPUT
    assert "ran out of device memory in the judge's reference process" in verdict.error


def test_compile_error_is_a_build_failure_with_the_compiler_message(tmp_path: Path) -> None:
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "bad.cpp").write_text("int f() { return undefined_name; }\n")
    shutil.copy(ZOO / "correct.py", tmp_path / "model_new.py")
    verdict = check(ZOO / "task.py", tmp_path / "model_new.py", OPTS)
    assert verdict.status is Status.BUILD_FAILED and verdict.exit_code == 3
    assert "undefined_name" in verdict.error


def test_editing_one_source_rebuilds_only_that_source(tmp_path: Path) -> None:
    kernels = tmp_path / "kernels"
    shutil.copytree(ZOO / "kernels", kernels)
    first = build_kernels(kernels, tmp_path / "build", 600)
    assert first.ok, first.log
    assert sorted(first.rebuilt) == ["cudaopt_module.o", "zoo.o", "zoo_binding.o"]
    source = kernels / "zoo.cpp"
    source.write_text(source.read_text() + "\n// edited\n")
    second = build_kernels(kernels, tmp_path / "build", 600)
    assert second.ok and second.rebuilt == ["zoo.o"]
    assert build_kernels(kernels, tmp_path / "build", 600).rebuilt == []


def test_concurrent_builds_of_one_folder_take_turns(tmp_path: Path) -> None:
    """Two judgements of the same candidate at once must not read a half-written module."""
    from concurrent.futures import ThreadPoolExecutor

    kernels = tmp_path / "kernels"
    shutil.copytree(ZOO / "kernels", kernels)
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda _: build_kernels(kernels, tmp_path / "b", 600), [0, 1]))
    assert all(r.ok for r in results), [r.log[-500:] for r in results]
    assert sorted(len(r.rebuilt) for r in results) == [0, 3]  # the second found it built
    assert (tmp_path / "b" / "cuda_extension.so").stat().st_size > 0
