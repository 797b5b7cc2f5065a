"""results.jsonl survives a kill in the middle of a write: the cut line is ignored and the
next line stays whole; a line keeps what its job's attempts went through."""

from __future__ import annotations

from pathlib import Path

from cudaopt.bench import results
from cudaopt.executor import JobResult
from cudaopt.executor.lanes import RETRIED_ALONE


def test_a_line_cut_short_does_not_swallow_the_next(tmp_path: Path) -> None:
    results.append(tmp_path, {"task": "level1/a", "correct": True})
    with open(tmp_path / results.RESULTS, "a") as handle:
        handle.write('{"task": "level1/b", "corr')  # killed mid-write
    results.append(tmp_path, {"task": "level1/c", "correct": False})
    got = results.latest(results.read_lines(tmp_path))
    assert sorted(got) == ["level1/a", "level1/c"]
    assert got["level1/c"] == {"task": "level1/c", "correct": False}


def test_a_line_says_why_its_task_was_judged_more_than_once() -> None:
    """A judgement short of device memory beside other lanes, judged again alone: the line
    keeps both the verdict that stands and the failure before it."""
    result = JobResult("j", verdict={"status": "ok", "correct": True, "device_memory_gib": 7.5},
                       attempts=2, extra={"infra_errors": [RETRIED_ALONE], "span": [0, 1]})
    line = results.line_from_result(results.blank_line("level1/a", "level1", "k"), result, 0.0)
    assert line["correct"] and line["attempts"] == 2 and line["device_memory_gib"] == 7.5
    assert line["infra_errors"] == [RETRIED_ALONE] and "span" not in line
