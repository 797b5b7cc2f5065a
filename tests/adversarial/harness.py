"""Shared by the adversarial tests: judge a candidate, or run it through the naive harness."""

from __future__ import annotations

import atexit
import functools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from cudaopt.judge import JudgeOptions, JudgePool, Verdict, check, default_build_dir, worker_env
from cudaopt.judge.building.kernels import build_kernels

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CPU = HERE / "candidates"
GPU = HERE / "gpu" / "candidates"
TRITON = HERE / "gpu" / "triton"


@functools.cache
def build(folder: Path, device: str) -> Path | None:
    """Build a candidates folder's kernels/ once; the judge reuses the same build directory.
    None for a folder without one (Triton candidates)."""
    if not (folder / "kernels").is_dir():
        return None
    build_dir = default_build_dir(folder / "task.py", device)
    result = build_kernels(folder / "kernels", build_dir, 900)
    assert result.ok, result.log[-4000:]
    return build_dir


@functools.cache
def warm_pool(device: str) -> JudgePool:
    """One warm pool per device for this test process, as a bench slot or an agent run
    judges: each task's reference and baseline processes forked warm, a candidate process
    started ahead. Every hack still gets a candidate process of its own, and the reference
    processes never import candidate code; a hack that crashes or kills its worker costs
    only its own judgement."""
    pool = JudgePool(worker_env(JudgeOptions(device=device)))
    atexit.register(pool.close)
    return pool


def judge(name: str, folder: Path = CPU, task: str = "task.py", warm: bool = True,
          **options: Any) -> Verdict:
    """The judge on one candidate, kept quick: no torch.compile baseline, a short budget.
    `warm=False`: a one-off judgement, whose new processes see the test's environment as it
    is now (a warm pool's candidate process was started ahead, before the test ran)."""
    settings: dict[str, Any] = dict(device="cpu", profile=False, compile_baseline=False,
                                    time_budget_s=2.0, min_rounds=2, max_rounds=8)
    settings.update(options)
    build(folder, settings["device"])
    return check(folder / task, folder / f"{name}.py", JudgeOptions(**settings),
                 pool=warm_pool(settings["device"]) if warm else None)


def naive(name: str, folder: Path = CPU, device: str = "cpu", order: str = "ref_first",
          task: str = "task.py") -> dict[str, Any]:
    """What the naive harness (tests/adversarial/naive.py) says about a candidate."""
    build_dir = build(folder, device)
    proc = subprocess.run(
        [sys.executable, "-m", "tests.adversarial.naive", str(folder / task),
         str(folder / f"{name}.py"), str(build_dir), "--device", device, "--order", order],
        cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def fools_naive(name: str, **kwargs: Any) -> bool:
    """The hack passes the naive harness's checks: correct outputs, no guard tripped."""
    result = naive(name, **kwargs)
    return result["correct"] and result["clean"]
