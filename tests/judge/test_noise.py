"""On CPU too, timing noise alone must never make a candidate 'faster'."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from rich.console import Console

from cudaopt.judge import JudgeOptions, Status, Verdict, check
from cudaopt.judge.timing import noise
from cudaopt.judge.verdict.reward import milestone_reward
from cudaopt.reports.verdict import render_verdict
from tests import load

ZOO = Path(__file__).parent / "zoo"


def test_candidate_identical_to_reference_is_never_called_faster(tmp_path: Path) -> None:
    source = (ZOO / "task.py").read_text().replace("class Model(", "class ModelNew(")
    (tmp_path / "model_new.py").write_text(source)
    verdict = check(ZOO / "task.py", tmp_path / "model_new.py",
                    JudgeOptions(device="cpu", allow=["*"], time_budget_s=3.0,
                                 compile_baseline=False))
    assert verdict.status is Status.OK, verdict.error or verdict.violations
    assert verdict.reward < 2, (verdict.speedup_vs_eager, verdict.speedup_vs_eager_low)


@pytest.fixture
def bursty_load() -> Iterator[None]:
    """Processes that burst on the judge's own cores for a few to hundreds of milliseconds at
    a time: load that hits the baselines and the candidate unequally, call by call and round
    by round."""
    pids = load.start_bursts()
    try:
        yield
    finally:
        load.stop(pids)


def test_noise_that_persists_marks_the_verdict_noisy_and_caps_the_reward(
        tmp_path: Path, bursty_load: None) -> None:
    source = (ZOO / "threaded_task.py").read_text().replace("class Model(", "class ModelNew(")
    (tmp_path / "model_new.py").write_text(source)
    verdict = check(ZOO / "threaded_task.py", tmp_path / "model_new.py",
                    JudgeOptions(device="cpu", allow=["*"], time_budget_s=2.0, min_rounds=4,
                                 max_rounds=8, compile_baseline=False))
    assert verdict.status is Status.OK, verdict.error or verdict.violations
    assert verdict.noisy and verdict.reward <= 1, verdict.warnings
    assert any(w.startswith("noisy measurements") for w in verdict.warnings)
    assert verdict.threads == min(torch.get_num_threads(), len(os.sched_getaffinity(0)))
    assert verdict.to_json()["noisy"] is True
    console = Console(record=True, width=100)
    render_verdict(verdict, console)
    text = console.export_text()
    assert "noisy" in text.splitlines()[0] and f"CPU threads: {verdict.threads}" in text


def test_a_noisy_verdict_earns_no_speed_milestone() -> None:
    verdict = Verdict(compiled=True, correct=True, speedup_vs_eager_low=3.0,
                      speedup_vs_compile_low=3.0)
    assert milestone_reward(verdict, 0.05) == 3
    verdict.noisy = True
    assert milestone_reward(verdict, 0.05) == 1


def _rounds(eager: list[float], candidate: list[float]) -> list[dict[str, list[float]]]:
    return [{"eager": [e, e * 1.02, e * 0.98], "candidate": [c, c * 1.02, c * 0.98]}
            for e, c in zip(eager, candidate, strict=True)]


def test_noise_matters_only_where_it_could_change_the_reward() -> None:
    scattered = [1.0, 1.25, 0.8, 1.1, 0.9, 1.3]
    same = _rounds(scattered, [1.0] * 6)
    assert noise.reasons(same, ["eager"], 0.05)  # ±15%: an identity could read 1.1x
    far = _rounds([30 * x for x in scattered], [1.0] * 6)
    assert noise.reasons(far, ["eager"], 0.05) == []  # 30x give or take 15% is faster
    steady = _rounds([1.0, 1.01, 0.99, 1.0, 1.01, 0.99], [1.0] * 6)
    assert noise.reasons(steady, ["eager"], 0.05) == []


def test_rounds_stop_once_no_more_of_them_could_move_the_lower_quartile_across_the_line(
) -> None:
    """The reward reads the lower quartile of the per-round speedups: rounds stop when it is
    above the 1 + margin line, or when the rounds show it is below with 95% confidence."""
    scatter = [1.0, 1.12, 0.88, 1.06, 0.94, 1.1, 0.9, 1.04, 0.96, 1.0, 1.08, 0.92]
    identity = _rounds(scatter, [1.0] * 12)  # ±10%: never narrows to a 2% spread
    assert not noise.settled(identity[:5], ["eager"], 0.05)  # the 4th of 5 is above 1.05
    assert noise.settled(identity, ["eager"], 0.05)  # the 7th of 12 is below it
    near = _rounds([x * 1.05 for x in scatter], [1.0] * 12)  # around the line itself
    assert not noise.settled(near, ["eager"], 0.05)
    faster = _rounds([x * 1.3 for x in scatter[:5]], [1.0] * 5)
    assert noise.settled(faster, ["eager"], 0.05)
    # each contestant must be settled: the candidate near the line against torch.compile
    both = [{**a, "compile": b["eager"]} for a, b in zip(identity, near, strict=True)]
    assert not noise.settled(both, ["eager", "compile"], 0.05)


# Each call spins beyond the task's own operators for a heavy-tailed share of their time
# (median 0.3x, quartiles 0.1x and 0.9x, at most 3x): its single calls scatter about six
# margins, so the rounds are noisy, yet every round's median stays near 1.3x eager's and
# never puts it above eager. Its rounds do not flip between two levels as a coin-flip
# candidate's do, which put four rounds of five on the slow side one time in five and
# with them the speedup so far below the line that the noise no longer counted.
HEAVY_TAILED = '''
import random, time
from task import Model


class ModelNew(Model):
    def forward(self, x):
        started = time.perf_counter()
        out = super().forward(x)
        share = min(0.3 * (1 / (1 - random.random()) - 1), 3.0)
        end = time.perf_counter() + share * (time.perf_counter() - started)
        while time.perf_counter() < end:
            pass
        return out
'''


def test_noise_below_the_line_is_not_measured_again(tmp_path: Path) -> None:
    """A second measurement could not earn a candidate that the rounds already put below
    eager a speed milestone: one measurement, marked noisy, says so."""
    source = (ZOO / "threaded_task.py").read_text()
    (tmp_path / "task.py").write_text(source)
    (tmp_path / "model_new.py").write_text(HEAVY_TAILED)
    options = JudgeOptions(device="cpu", allow=["*"], compile_baseline=False, threads=1)
    said: list[str] = []
    verdict = check(tmp_path / "task.py", tmp_path / "model_new.py", options, said.append)
    assert verdict.status is Status.OK, verdict.error or verdict.violations
    assert verdict.noisy and verdict.reward == 1, verdict.warnings
    assert not any("contended" in w for w in verdict.warnings), verdict.warnings
    assert any(w.startswith("noisy measurements, not re-measured") for w in verdict.warnings)
    # One measurement: it stops at the first round from `min_rounds` on that settles the
    # reward, which on a loaded machine may be a round or two later than the fifth.
    assert not any("unreliable measurements" in m for m in said), said
    assert [m.split(" (")[0] for m in said].count("timing: round 1") == 1, said


def test_out_of_reach_needs_the_speedup_over_eager_confidently_below_the_line() -> None:
    slower = _rounds([1.0, 0.7, 1.02, 0.75, 0.9], [1.0] * 5)
    assert noise.out_of_reach(slower, 0.05)  # 4 of 5 below 1.05
    near = _rounds([1.0, 1.1, 1.02, 1.2, 0.9], [1.0] * 5)
    assert not noise.out_of_reach(near, 0.05)  # the 4th of 5 is above the line
