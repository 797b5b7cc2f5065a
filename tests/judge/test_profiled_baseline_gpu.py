"""A warm pool on CUDA profiles a task's baseline process once: that process, which would
launch slower ever after, is replaced, and later judgements reuse its breakdown."""

from __future__ import annotations

import pytest

from cudaopt.judge import JudgeOptions, JudgePool, Status, check, worker_env

from ..conftest import EXAMPLES

pytestmark = pytest.mark.gpu


def test_the_profiled_baseline_is_replaced_once_and_its_breakdown_reused() -> None:
    example = EXAMPLES / "fused_swish_cuda"
    task = example / "model.py"
    options = JudgeOptions(device="cuda", time_budget_s=2.0)
    pool = JudgePool(worker_env(options))
    try:
        verdicts, kept = [], []
        for _ in range(3):
            verdict = check(task, example / "model_new.py", options, pool=pool)
            assert verdict.status is Status.OK and verdict.correct, (
                verdict.error or verdict.violations)
            verdicts.append(verdict)
            baseline = pool.references(task, "cuda")[1]
            kept.append(baseline.worker.proc.pid if baseline else None)
        assert kept[0] is None  # profiled in the first judgement: let go
        assert kept[1] is not None and kept[2] == kept[1]  # never profiled: kept
        for later in verdicts[1:]:
            assert later.breakdown["eager"] == verdicts[0].breakdown["eager"]
            assert later.breakdown["compile"] == verdicts[0].breakdown["compile"]
            assert later.kernels_ran  # the candidate is profiled in every judgement
    finally:
        pool.close()
