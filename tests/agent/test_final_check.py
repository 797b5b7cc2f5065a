"""The run's final check is judged again when a busy machine made its timing noisy: real
load from other processes while the first final check times, a real judge on the CPU."""

from __future__ import annotations

from pathlib import Path

from cudaopt.agent.best import FINAL_CHECKS, BestTracker
from cudaopt.judge import JudgeOptions, Verdict
from tests import load
from tests.conftest import ROOT

TASK = ROOT / "tests" / "judge" / "zoo" / "threaded_task.py"


def test_a_final_check_timed_on_a_busy_machine_is_judged_again(tmp_path: Path) -> None:
    best = tmp_path / "run" / "best"
    best.mkdir(parents=True)
    (best / "model_new.py").write_text(
        TASK.read_text().replace("class Model(", "class ModelNew("))
    Verdict(compiled=True, correct=True).write(best / "verdict.json")
    bursts: list[int] = []
    said: list[str] = []

    def progress(message: str) -> None:  # the load comes for the first check's timing
        said.append(message)
        if message.endswith("timing: warm-up") and not bursts:
            bursts.extend(load.start_bursts())
        if "judging again" in message:
            load.stop(bursts)

    options = JudgeOptions(device="cpu", allow=["*"], time_budget_s=2.0, min_rounds=4,
                           max_rounds=8, compile_baseline=False)
    tracker = BestTracker(TASK, tmp_path / "run", options, progress=progress)
    try:
        final = tracker.final_check()
    finally:
        load.stop(bursts)
    assert final is not None and final.clean, final
    again = [m for m in said if "judging again" in m]
    assert again and again[0].endswith(f"2 of {FINAL_CHECKS}"), said
