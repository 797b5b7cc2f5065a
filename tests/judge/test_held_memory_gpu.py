"""What a warm pool's kept processes hold on the GPU is what their figures say: a lender
(the machine judge) keeps a pair only under its memory bound, and reads the bound from
those figures. The stream check drew inputs and outputs in the reference process after its
figure was taken, so after 6 GiB-input tasks a kept reference held 18.8 GiB under a figure
of almost nothing, and the next tasks of a bench ran out of memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudaopt.judge import JudgeOptions, JudgePool, Status, check, worker_env

from .test_check_gpu import LARGE_TASK

pytestmark = pytest.mark.gpu

#: 64 MiB in, 64 MiB out: well above what an idle process keeps
TASK = LARGE_TASK.replace("torch.randn(2048, 262144)", "torch.randn(4096, 4096)")


def test_a_kept_process_holds_no_more_than_its_figure(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text(TASK)
    (tmp_path / "model_new.py").write_text(TASK.replace("class Model(", "class ModelNew("))
    options = JudgeOptions(device="cuda", allow=["*"], time_budget_s=1.0)
    pool = JudgePool(worker_env(options))
    try:
        verdict = check(tmp_path / "model.py", tmp_path / "model_new.py", options, pool=pool)
        assert verdict.status is Status.OK and verdict.correct, verdict.error
        assert verdict.stream_check.startswith("CUDA graph")  # the reference drew for it
        kept = [loaded for loaded in (pool._reference, pool._baseline) if loaded is not None]
        assert kept
        for loaded in kept:
            assert not loaded.owed, loaded.owed
            # `finish` with nothing to keep reports what the process holds now, freeing none
            _, held, _ = loaded.worker.call("finish", 60, keep=None)["memory_gib"]
            assert held <= loaded.device_gib + 1 / 64, (loaded.worker.role, held,
                                                         loaded.device_gib)
    finally:
        pool.close()
