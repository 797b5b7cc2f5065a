"""The judge on CPU with real C++ extension candidates (tests/judge/zoo)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cudaopt.judge import JudgeOptions, Status, check

ZOO = Path(__file__).parent / "zoo"
TASK = ZOO / "task.py"


def judge(name: str, **options) -> object:
    opts = JudgeOptions(device="cpu", profile=False, seed=1234, **options)
    return check(TASK, ZOO / f"{name}.py", opts)


def test_correct_candidate_passes_every_trial() -> None:
    verdict = judge("correct")
    assert verdict.status is Status.OK, verdict.error or verdict.violations
    assert verdict.compiled and verdict.correct
    assert verdict.trials == 5 and len(verdict.inputs_structured) == 3
    assert verdict.violations == []


def test_wrong_values_are_reported_with_first_mismatches() -> None:
    verdict = judge("wrong_values")
    assert verdict.status is Status.WRONG and not verdict.correct
    assert "elements differ" in verdict.mismatch[1]
    assert verdict.mismatch[2].lstrip().startswith("at (")
    assert verdict.reward == -1


def test_wrong_shape_is_reported() -> None:
    verdict = judge("wrong_shape")
    assert verdict.status is Status.WRONG
    assert "shape (8, 255), expected (8, 256)" in " ".join(verdict.mismatch)


def test_output_never_written_fails() -> None:
    verdict = judge("unwritten")
    assert verdict.status is Status.WRONG


def test_segfault_is_a_crash_verdict() -> None:
    verdict = judge("crash")
    assert verdict.status is Status.CRASH
    assert "SIGSEGV" in verdict.error
    assert verdict.exit_code == 6


def test_hang_is_killed_at_the_timeout() -> None:
    verdict = judge("hang", timeout_s=5)
    assert verdict.status is Status.TIMEOUT
    assert "no answer within 5 s" in verdict.error


def test_torch_op_in_forward_is_a_violation_naming_the_operator() -> None:
    verdict = judge("torch_in_forward")
    assert verdict.status is Status.VIOLATION
    assert any("aten.sigmoid" in v for v in verdict.violations)
    assert verdict.reward == -1


def test_torch_op_issued_from_cpp_is_caught() -> None:
    verdict = judge("torch_in_cpp")
    assert verdict.status is Status.VIOLATION
    assert any("aten.sigmoid" in v for v in verdict.violations)
    assert any("aten.clamp" in v for v in verdict.violations)


def test_allow_list_relaxes_the_rule() -> None:
    verdict = judge("torch_in_forward", allow=["sigmoid", "mul", "add", "clamp"])
    assert verdict.status is Status.OK, verdict.violations


def test_state_dict_mismatch_explains_the_keys() -> None:
    verdict = judge("missing_param")
    assert verdict.status is Status.WRONG
    assert "load_state_dict" in verdict.error and "bias" in verdict.error


def test_cli_check_times_and_writes_the_json_contract(tmp_path: Path) -> None:
    out = tmp_path / "verdict.json"
    proc = subprocess.run(
        [sys.executable, "-m", "cudaopt.cli", "check", str(TASK), str(ZOO / "correct.py"),
         "--device", "cpu", "--json", str(out), "--time-budget", "3"],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(out.read_text())
    for key in ("compiled", "correct", "violations", "eager_ms", "compile_ms", "candidate_ms",
                "speedup_vs_eager", "speedup_vs_compile", "reward", "device",
                "eager_spread_ms", "compile_spread_ms", "candidate_spread_ms"):
        assert key in data
    assert data["correct"] and data["device"] == "cpu"
    assert data["candidate_ms"] > 0 and data["eager_ms"] > 0 and data["compile_ms"] > 0
    assert data["reward"] in (1.0, 2.0, 3.0)


@pytest.mark.parametrize("name", ["wrong_values", "crash"])
def test_cli_exit_codes_are_distinct(name: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "cudaopt.cli", "check", str(TASK), str(ZOO / f"{name}.py"),
         "--device", "cpu", "--no-profile"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == {"wrong_values": 4, "crash": 6}[name], proc.stdout


def test_a_broken_library_in_the_compile_cache_is_built_again_not_blamed_on_the_task(
        tmp_path: Path) -> None:
    """A worker killed while torch.compile built a kernel library leaves the file empty in
    the shared cache, and inductor trusts any file at that path: every later judgement of
    the task then failed with "the task itself failed to run". The baseline worker drops
    the broken library and compiles again."""
    import os

    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    for name in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "TORCH_EXTENSIONS_DIR"):
        env.pop(name, None)
    argv = [sys.executable, "-m", "cudaopt.cli", "check", str(TASK), str(ZOO / "correct.py"),
            "--device", "cpu", "--time-budget", "1"]
    first = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stdout + first.stderr
    libraries = list((tmp_path / "cache" / "cudaopt" / "inductor").rglob("*.main.so"))
    assert libraries, "the baseline's compile built no kernel library to break"
    for library in libraries:
        library.write_bytes(b"")  # what a build killed half-way leaves
    again = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stdout + again.stderr
    assert all(not lib.exists() or lib.stat().st_size > 0 for lib in libraries)  # dropped
