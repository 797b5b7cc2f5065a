"""Helpers for tests/misc: git on real repos, accepted verdicts, metas, candidate folders."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cudaopt.judge.verdict.verdict import Status, Timing, Verdict
from cudaopt.runs.folder import RunMeta

IDENTITY_VARS = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME",
                 "GIT_COMMITTER_EMAIL", "EMAIL", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE")


def git(repo: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr}")
    return done.stdout


def make_verdict(speedup_vs_compile: float = 1.5) -> Verdict:
    eager = Timing(median_ms=3.0, q1_ms=2.9, q3_ms=3.1, min_ms=2.8, samples=20)
    compiled = Timing(median_ms=2.0, q1_ms=1.95, q3_ms=2.05, min_ms=1.9, samples=20)
    cand = Timing(median_ms=2.0 / speedup_vs_compile, q1_ms=1.3, q3_ms=1.36, min_ms=1.2,
                  samples=20)
    return Verdict(
        status=Status.OK, compiled=True, correct=True, device="cuda",
        device_name="NVIDIA H200", torch_version="2.9.0+cu128", trials=5,
        eager=eager, compiled_baseline=compiled, candidate=cand,
        speedup_vs_eager=3.0 / cand.median_ms, speedup_vs_compile=speedup_vs_compile,
        speedup_vs_eager_low=2.1, speedup_vs_compile_low=speedup_vs_compile - 0.05,
        reward=3.0,
    )


def make_meta(task: Path, run_id: str = "model-20250101-120000", **kw: object) -> RunMeta:
    fields = dict(run_id=run_id, task=str(task), model="anthropic/claude-sonnet-4-5",
                  device="cuda", started="2025-01-01T12:00:00")
    fields.update(kw)
    return RunMeta(**fields)  # type: ignore[arg-type]


def make_candidate(folder: Path) -> Path:
    """model_new.py, kernel sources, and build junk that must never be committed."""
    (folder / "kernels" / "build").mkdir(parents=True)
    (folder / "kernels" / "__pycache__").mkdir()
    (folder / "model_new.py").write_text("class ModelNew:  # fast\n    pass\n")
    (folder / "kernels" / "add.cu").write_text("__global__ void add() {}\n")
    (folder / "kernels" / "add.cu").chmod(0o755)
    (folder / "kernels" / "add_binding.cpp").write_text('#include "cudaopt_binding.h"\n')
    (folder / "kernels" / "build" / "add.o").write_bytes(b"\x7fELF")
    (folder / "kernels" / "__pycache__" / "x.pyc").write_bytes(b"pyc")
    (folder / "kernels" / "cuda_extension.so").write_bytes(b"\x7fELF")
    return folder
