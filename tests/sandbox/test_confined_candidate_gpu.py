"""A candidate worker confined by the sandbox, as in `optimize`, `bench` and `env serve`, is
judged on the GPU: the sandbox's own /tmp hides the GPU's lock file, so the judge takes the
GPU's turn for the candidate's step instead of the candidate."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudaopt.judge import JudgeOptions, JudgePool, Status, check, worker_env
from cudaopt.sandbox import resolve_sandbox

from ..conftest import EXAMPLES

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("bwrap_ok")]


def test_a_sandboxed_candidate_worker_is_judged_on_the_gpu(tmp_path: Path) -> None:
    box = resolve_sandbox("bwrap")

    def confine(argv: list[str], env: dict[str, str],
                writable: list[Path]) -> tuple[list[str], dict[str, str]]:
        return box.wrap_process(argv, env, tmp_path, writable)

    options = JudgeOptions(device="cuda", time_budget_s=5.0)
    pool = JudgePool(worker_env(options), keep_warm=False, wrapper=confine, confined=True)
    try:
        ex = EXAMPLES / "fused_swish_cuda"
        verdict = check(ex / "model.py", ex / "model_new.py", options, pool=pool)
    finally:
        pool.close()
    assert verdict.status is Status.OK, verdict.error or verdict.violations
    assert verdict.correct and verdict.reward >= 1
