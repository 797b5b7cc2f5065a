"""A warm pool on CUDA profiles a task's baseline process once: that process, which would
launch slower ever after, trades roles with the reference process (never timed), and later
judgements reuse its breakdown."""

from __future__ import annotations

import pytest

from cudaopt.judge import JudgeOptions, JudgePool, Status, check, worker_env

from ..conftest import EXAMPLES

pytestmark = pytest.mark.gpu


def test_the_profiled_baseline_process_is_never_timed_again() -> None:
    example = EXAMPLES / "fused_swish_cuda"
    task = example / "model.py"
    options = JudgeOptions(device="cuda", time_budget_s=2.0)
    pool = JudgePool(worker_env(options))
    try:
        verdicts, held = [], []
        for _ in range(3):
            verdict = check(task, example / "model_new.py", options, pool=pool)
            assert verdict.status is Status.OK and verdict.correct, (
                verdict.error or verdict.violations)
            verdicts.append(verdict)
            reference, baseline = pool.references(task, "cuda")
            held.append((reference.worker, baseline.worker))
        first_reference, first_baseline = held[0]
        assert first_reference.profiled and not first_baseline.profiled  # traded roles
        assert held[1] == held[2] == held[0]  # never profiled again: kept as they are
        for later in verdicts[1:]:
            assert later.breakdown["eager"] == verdicts[0].breakdown["eager"]
            assert later.breakdown["compile"] == verdicts[0].breakdown["compile"]
            assert later.kernels_ran  # the candidate is profiled in every judgement
    finally:
        pool.close()
