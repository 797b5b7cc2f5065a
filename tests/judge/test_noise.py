"""On CPU too, timing noise alone must never make a candidate 'faster'."""

from __future__ import annotations

from pathlib import Path

from cudaopt.judge import JudgeOptions, Status, check

ZOO = Path(__file__).parent / "zoo"


def test_candidate_identical_to_reference_is_never_called_faster(tmp_path: Path) -> None:
    source = (ZOO / "task.py").read_text().replace("class Model(", "class ModelNew(")
    (tmp_path / "model_new.py").write_text(source)
    verdict = check(ZOO / "task.py", tmp_path / "model_new.py",
                    JudgeOptions(device="cpu", allow=["*"], time_budget_s=3.0,
                                 compile_baseline=False))
    assert verdict.status is Status.OK, verdict.error or verdict.violations
    assert verdict.reward < 2, (verdict.speedup_vs_eager, verdict.speedup_vs_eager_low)
