"""results.jsonl survives a kill in the middle of a write: the cut line is ignored and the
next line stays whole."""

from __future__ import annotations

from pathlib import Path

from cudaopt.bench import results


def test_a_line_cut_short_does_not_swallow_the_next(tmp_path: Path) -> None:
    results.append(tmp_path, {"task": "level1/a", "correct": True})
    with open(tmp_path / results.RESULTS, "a") as handle:
        handle.write('{"task": "level1/b", "corr')  # killed mid-write
    results.append(tmp_path, {"task": "level1/c", "correct": False})
    got = results.latest(results.read_lines(tmp_path))
    assert sorted(got) == ["level1/a", "level1/c"]
    assert got["level1/c"] == {"task": "level1/c", "correct": False}
