"""What a warm pool's kept processes hold on the GPU is what their figures say: a lender
(the machine judge) keeps a pair only under its memory bound, and reads the bound from
those figures. The stream check drew inputs and outputs in the reference process after its
figure was taken, so after 6 GiB-input tasks a kept reference held 18.8 GiB under a figure
of almost nothing, and the next tasks of a bench ran out of memory. A pair is now measured
as it is given; a baseline still loading or compiling (its judgement failed first) is not
given at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudaopt.judge import JudgeOptions, JudgePool, Status, check, worker_env
from cudaopt.judge.serving.lender import Store
from cudaopt.judge.workers.lending import Loaded

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
            _holds_its_figure(loaded)
    finally:
        pool.close()


def _holds_its_figure(loaded: Loaded) -> None:
    # `finish` with nothing to keep reports what the process holds now, freeing none
    _, held, _ = loaded.worker.call("finish", 60, keep=None)["memory_gib"]
    assert held <= loaded.device_gib + 1 / 64, (loaded.worker.role, held, loaded.device_gib)


@pytest.mark.parametrize("wrong", [False, True])
def test_a_lent_pair_holds_no_more_than_its_figures(tmp_path: Path, wrong: bool) -> None:
    """Given to a lender as the pool moves on: each figure read then. A wrong candidate ends
    its judgement before the baseline's compile is read: the reference alone is lent."""
    (tmp_path / "model.py").write_text(TASK)
    candidate = TASK.replace("class Model(", "class ModelNew(")
    (tmp_path / "model_new.py").write_text(
        candidate.replace("0.01)", "0.5)") if wrong else candidate)
    options = JudgeOptions(device="cuda", allow=["*"], time_budget_s=1.0)
    store, pool = Store(tmp_path / "leases"), JudgePool(worker_env(options))
    pool.lender = store
    try:
        verdict = check(tmp_path / "model.py", tmp_path / "model_new.py", options, pool=pool)
        assert verdict.correct is not wrong, verdict.error
        pool.close()
        assert len(store) == 1
        (lease,) = store._held.values()
        assert (lease.baseline is None) is wrong
        for loaded in lease.loaded:
            _holds_its_figure(loaded)
    finally:
        pool.close()
        store.close()
