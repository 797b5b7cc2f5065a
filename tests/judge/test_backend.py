"""The candidate's kernel language, read from its files; Triton refused where it cannot
run, before anything is built."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cudaopt.judge import JudgeOptions, Status, check
from cudaopt.judge.checks.backend import candidate_backend

ROOT = Path(__file__).resolve().parents[2]
TRITON = ROOT / "tests" / "adversarial" / "gpu" / "triton"


def test_each_layout_is_named_by_its_kernels(tmp_path: Path) -> None:
    assert candidate_backend(ROOT / "examples" / "fused_swish_cuda" / "model_new.py") == "cuda"
    assert candidate_backend(ROOT / "examples" / "prefix_sum_cpu" / "model_new.py") == "cpp"
    assert candidate_backend(TRITON / "honest.py") == "triton"  # through `from swish import`
    plain = tmp_path / "model_new.py"
    plain.write_text("import torch\nclass ModelNew(torch.nn.Module):\n    pass\n")
    assert candidate_backend(plain) == "torch"
    plain.write_text("from torch.utils.cpp_extension import load_inline\n"
                     "ext = load_inline('k', 'int f();', 'int f() { return 0; }')\n")
    assert candidate_backend(plain) == "cuda"  # cuda_sources given by position


def test_a_triton_candidate_on_the_cpu_is_refused_before_anything_is_built() -> None:
    verdict = check(TRITON / "task.py", TRITON / "honest.py", JudgeOptions(device="cpu"))
    assert verdict.status is Status.BAD_INPUT and verdict.backend == "triton"
    assert "Triton, which runs on a CUDA GPU only" in verdict.error
    assert verdict.phases_s == {}, "nothing started"


def test_the_cli_says_so_with_the_bad_input_exit_code() -> None:
    done = subprocess.run([sys.executable, "-m", "cudaopt.cli", "check", str(TRITON / "task.py"),
                           str(TRITON / "honest.py"), "--device", "cpu"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "runs on a CUDA GPU only" in done.stdout + done.stderr
