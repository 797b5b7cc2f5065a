"""Candidate mode end to end on the CPU suite (real builds, real judge processes), one bench
shared by the assertions: each kind of candidate gets its verdict, the summary equals what
the lines give by hand, re-running judges nothing, and both candidate layouts are found."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from cudaopt.bench.candidates import find_candidate
from cudaopt.bench.suite import discover
from tests.bench.conftest import FAST, bench, lines

REQUIRED = ("task", "level", "correct", "reward", "speedup_vs_eager", "speedup_vs_compile",
            "infra_status", "compiled", "steps", "cost_usd", "wall_s", "slot", "device_name",
            "torch_version", "build_s", "verify_s", "profile_s", "eager_ms", "candidate_ms")


@pytest.fixture(scope="module")
def judged(suite: Path, candidates: Path, work: Path, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("bench") / "b"
    proc = bench(suite, "--candidates", candidates, "--out", out, "--work", work, *FAST)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out, proc


def test_each_candidate_gets_its_verdict(judged) -> None:
    out, proc = judged
    got = lines(out)
    assert sorted(got) == ["level1/1_prefix_sum", "level1/2_swish_wrong", "level1/3_swish_hang",
                           "level2/4_swish_build", "level2/5_swish_missing"]
    for line in got.values():
        assert all(key in line for key in REQUIRED), sorted(set(REQUIRED) - set(line))
        assert line["infra_status"] == "ok" and line["infra_error"] is None
    fast = got["level1/1_prefix_sum"]  # honestly faster; its reward is the judge's (noise, warm)
    assert fast["correct"] and fast["reward"] >= 1 and fast["speedup_vs_compile"] > 1.05
    assert fast["slot"] == "cpu:0" and fast["torch_version"]
    assert {"speedup_vs_eager", "speedup_vs_compile"} <= set(fast["warm"])  # back to back
    assert {k: got[k]["status"] for k in got if k != "level1/1_prefix_sum"} == {
        "level1/2_swish_wrong": "wrong", "level1/3_swish_hang": "timeout",
        "level2/4_swish_build": "build_failed", "level2/5_swish_missing": "no_candidate"}
    assert all(got[k]["reward"] == -1.0 for k in got if k != "level1/1_prefix_sum")
    assert "no candidate for level2/5_swish_missing" in proc.stdout + proc.stderr


def _gm(values: list[float]) -> float:
    return math.exp(sum(map(math.log, values)) / len(values))


def test_summary_is_what_the_lines_give_by_hand(judged) -> None:
    out, _ = judged
    got = lines(out)
    summary = json.loads((out / "summary.json").read_text())
    fast = got["level1/1_prefix_sum"]
    level1, overall = summary["levels"]["level1"], summary["overall"]
    assert (level1["tasks"], level1["correct"], level1["compiled"]) == (3, 1, 3)
    assert (overall["tasks"], overall["correct"], overall["infra_failed"]) == (5, 1, 0)
    assert overall["compiled"] == 3  # wrong, hang and prefix_sum built; the broken one did not
    # "faster" is the judge's decision (the milestone reward), not a speedup read alone
    assert level1["faster_than_compile_share"] == pytest.approx((fast["reward"] >= 3) / 3)
    assert overall["faster_than_eager_share"] == pytest.approx((fast["reward"] >= 2) / 5)
    assert overall["fast_1"] == pytest.approx(1 / 5) and overall["fast_0"] == pytest.approx(1 / 5)
    assert summary["levels"]["level2"]["fast_0"] == 0
    for against in ("eager", "compile"):
        speedup = fast[f"speedup_vs_{against}"]
        assert level1[f"geomean_vs_{against}"] == pytest.approx(_gm([speedup, 1.0, 1.0]))
        assert overall[f"geomean_vs_{against}"] == pytest.approx(_gm([speedup] + [1.0] * 4))
        assert overall[f"geomean_vs_{against}_correct"] == pytest.approx(speedup)
    assert overall["mean_reward"] == pytest.approx((fast["reward"] - 4) / 5)
    assert overall["gpu_hours"] == pytest.approx(sum(x["wall_s"] for x in got.values()) / 3600)
    assert summary["levels"]["level2"]["geomean_vs_compile_correct"] is None
    md = (out / "summary.md").read_text()
    assert "| **overall** | 5 | 0 | 3 | 20.0% |" in md
    csv_rows = (out / "summary.csv").read_text().splitlines()
    assert csv_rows[0].startswith("level,tasks,") and csv_rows[-1].startswith("overall,5,")


def test_the_table_fits_80_columns_and_show_repeats_it(judged) -> None:
    out, proc = judged
    table = proc.stdout
    assert "overall" in table and "correctness" in table
    assert max(len(row) for row in table.splitlines()) <= 80
    shown = bench("show", out)
    assert shown.returncode == 0 and shown.stdout == table
    missing = bench("show", out.parent / "nothing")
    assert missing.returncode == 2 and "not a bench folder" in missing.stderr


def test_running_again_judges_nothing_done(judged, suite: Path, candidates: Path,
                                           work: Path) -> None:
    out, _ = judged
    before = (out / "results.jsonl").read_text()
    again = bench(suite, "--candidates", candidates, "--out", out, "--work", work, *FAST)
    assert again.returncode == 0, again.stderr
    assert "5 already done, 0 to run" in " ".join(again.stderr.split())
    assert (out / "results.jsonl").read_text() == before


def test_kernelbench_layout_is_judged(suite: Path, candidates: Path, work: Path,
                                      tmp_path: Path) -> None:
    """KernelBench's generated-kernel files: level_<L>_problem_<N>_sample_<S>_kernel.py."""
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copy(candidates / "2_swish_wrong" / "model_new.py",
                runs / "level_1_problem_2_sample_0_kernel.py")
    shutil.copy(candidates / "3_swish_hang" / "model_new.py",
                runs / "level_1_problem_3_sample_1_kernel.py")  # sample 1: not the one asked
    shutil.copy(candidates / "2_swish_wrong" / "model_new.py",
                runs / "level_2_problem_1_sample_0_kernel.py")  # another level's problem 1
    out = tmp_path / "kb"
    proc = bench(suite / "level1", "--candidates", runs, "--out", out, "--work", work,
                 "--no-profile", *FAST)
    assert proc.returncode == 0, proc.stderr
    got = lines(out)
    assert got["level1/2_swish_wrong"]["status"] == "wrong"
    assert got["level1/2_swish_wrong"]["candidate"].endswith("level_1_problem_2_sample_0_kernel.py")
    assert got["level1/3_swish_hang"]["status"] == "no_candidate"
    assert got["level1/1_prefix_sum"]["status"] == "no_candidate"


def test_both_layouts_and_levels_are_recognised(suite: Path, tmp_path: Path) -> None:
    tasks = {t.id: t for t in discover([suite])}
    assert len(tasks) == 5 and tasks["level1/1_prefix_sum"].problem == 1
    nested = tmp_path / "nested" / "level2" / "4_swish_build"
    nested.mkdir(parents=True)
    (nested / "model_new.py").write_text("class ModelNew: pass\n")
    flat = tmp_path / "nested" / "level_2_problem_5_sample_2_kernel.py"
    flat.write_text("class ModelNew: pass\n")
    assert find_candidate(tasks["level2/4_swish_build"], tmp_path / "nested") == \
        nested / "model_new.py"
    assert find_candidate(tasks["level2/5_swish_missing"], tmp_path / "nested", 2) == flat
    assert find_candidate(tasks["level2/5_swish_missing"], tmp_path / "nested") is None
    assert find_candidate(tasks["level1/1_prefix_sum"], tmp_path / "nested") is None
    bad = bench(suite, "--candidates", tmp_path / "none", "--device", "cpu")
    assert bad.returncode == 2 and "no such folder" in " ".join(bad.stderr.split())
    both = bench(suite, "--device", "cpu")
    assert both.returncode == 2 and "--model" in both.stderr
    backend = bench(suite, "--candidates", tmp_path / "nested", "--backend", "triton")
    assert backend.returncode == 2 and "--backend is for agent mode" in backend.stderr
