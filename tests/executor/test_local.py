"""The local executor with real slot processes: judgements match `check`, a lost slot costs
only its own job (retried, then reported as the machine's failure, never as -1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudaopt.executor import Job, LocalExecutor, SlotSpec, Sources
from cudaopt.executor.slotproc import SlotProcess
from cudaopt.judge import JudgeOptions
from tests.conftest import EXAMPLES

CPU = EXAMPLES / "fused_swish_cpu"
ZOO = Path(__file__).parents[1] / "judge" / "zoo"


@pytest.fixture(scope="module")
def executor(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("exec")
    with LocalExecutor("cpu", root=root, plugins=("tests.executor.plugin",)) as ex:
        yield ex


def test_a_judge_job_gives_the_verdict_check_gives(executor: LocalExecutor) -> None:
    sources = Sources.from_files(CPU / "model.py", CPU / "model_new.py")
    assert sorted(sources.kernels) == ["fused_swish.cpp", "fused_swish_binding.cpp"]
    options = JudgeOptions(device="cpu", trials=2, time_budget_s=2.0, min_rounds=3)
    result = executor.submit(Job("swish", "judge", sources, options)).result(timeout=600)
    assert result.infra_error is None, result.infra_error
    assert result.verdict["correct"] and result.verdict["compiled"]
    assert result.verdict["violations"] == []
    assert result.slot == "cpu:0" and result.attempts == 1


def test_a_slot_that_dies_is_replaced_and_its_job_retried(executor: LocalExecutor,
                                                         tmp_path: Path) -> None:
    sources = Sources("t.py", "class Model: pass\n")
    job = Job("d", "die_once", sources, JudgeOptions(), {"mark": str(tmp_path / "mark")})
    result = executor.submit(job).result(timeout=300)
    assert result.infra_error is None
    assert result.attempts == 2
    assert "process died" in result.extra["infra_errors"][0]


def test_a_job_that_always_kills_its_slot_is_an_infrastructure_error(
        executor: LocalExecutor) -> None:
    job = Job("x", "always_die", Sources("t.py", "class Model: pass\n"), JudgeOptions())
    result = executor.submit(job).result(timeout=300)
    assert result.verdict is None
    assert "process died" in result.infra_error
    assert result.attempts == 2


def test_unknown_job_kinds_and_unsafe_names_are_refused(executor: LocalExecutor) -> None:
    result = executor.submit(Job("u", "nope", Sources("t.py", "x"), JudgeOptions())).result(60)
    assert "no handler for job kind 'nope'" in result.infra_error
    bad = Sources("t.py", "x", "class ModelNew: pass", {"../evil.cu": ""})
    with pytest.raises(ValueError, match="not a plain source file name"):
        bad.materialize(Path("/tmp/never"))


@pytest.mark.parametrize("told", [True, False])
def test_a_lane_told_its_first_jobs_settings_starts_its_judge_processes_before_the_job(
        tmp_path: Path, told: bool) -> None:
    """A GPU lane waiting for its turn is told its first judge job's settings (`PRESTART`):
    the job's reference and candidate processes then start before the job, their start-up
    outside its judgement (`boot_waited` under `boot`); untold, the job starts them."""
    options = JudgeOptions(device="cpu", profile=False)
    proc = SlotProcess(SlotSpec("cpu:0", "cpu"), tmp_path, "none", (), {}, {})
    try:
        if told:
            proc.prestart(options)
        sources = Sources.from_files(ZOO / "task.py", ZOO / "correct.py")
        result = proc.run(Job("j", "judge", sources, options), 600)
    finally:
        proc.close()
    assert result.infra_error is None, result.infra_error
    phases = result.verdict["phases_s"]
    for worker in ("load.reference", "load.candidate.import"):
        ahead = phases.get(f"{worker}.boot_waited", 0.0) < phases[f"{worker}.boot"]
        assert ahead == told, (worker, phases)
