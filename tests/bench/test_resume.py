"""A bench interrupted mid-way keeps every finished line and nothing half-done; running the
same command again finishes the rest without judging a finished task twice. Then `compare`
on that bench and an edited copy of it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.bench.conftest import FAST, bench, lines
from tests.conftest import ROOT


def _wait_for_lines(path: Path, count: int, proc: subprocess.Popen, limit_s: float) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline and proc.poll() is None:
        if path.exists() and len(path.read_text().splitlines()) >= count:
            return
        time.sleep(0.2)
    raise AssertionError(f"no {count} lines in {path} within {limit_s} s")


@pytest.fixture(scope="module")
def resumed(suite: Path, candidates: Path, work: Path, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("resume") / "b"
    argv = [sys.executable, "-m", "cudaopt.cli", "bench", str(suite), "--candidates",
            str(candidates), "--out", str(out), "--work", str(work), "--no-profile", *FAST]
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    # the missing candidate's line is written at once; wait for one judged task too
    _wait_for_lines(out / "results.jsonl", 2, proc, limit_s=600)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    first = lines(out)
    again = bench(*argv[4:])
    return out, proc.returncode, err, first, again


def test_an_interrupted_bench_keeps_what_finished(resumed) -> None:
    out, code, err, first, _ = resumed
    assert code == 130, err
    assert "interrupted" in err and "run the same command again" in " ".join(err.split())
    assert 2 <= len(first) < 5
    assert all(line["infra_status"] == "ok" for line in first.values())
    assert "executor closed" not in (out / "results.jsonl").read_text()


def test_running_again_finishes_without_rejudging(resumed) -> None:
    out, _, _, first, again = resumed
    assert again.returncode == 0, again.stderr
    assert f"{len(first)} already done, {5 - len(first)} to run" in " ".join(again.stderr.split())
    final = lines(out)
    assert len(final) == 5
    for task, line in first.items():
        assert final[task] == line  # the same line, not a re-judged one
    assert json.loads((out / "bench.json").read_text())["sessions"][0]["wall_s"] > 0


def test_retry_failed_reruns_only_failures(resumed, suite: Path, candidates: Path,
                                           work: Path) -> None:
    out, *_ = resumed
    before = lines(out)
    path = out / "results.jsonl"
    edited = dict(before["level1/2_swish_wrong"], infra_status="error", infra_error="disk full",
                  reward=None, status="infra_error")
    path.write_text("".join(json.dumps(edited if x["task"] == edited["task"] else x) + "\n"
                            for x in before.values()))
    plain = bench(suite / "level1" / "2_swish_wrong.py", "--candidates", candidates, "--out",
                  out, "--work", work, "--no-profile", *FAST)
    assert plain.returncode == 0 and "0 already done, 1 to run" in " ".join(plain.stderr.split())
    assert lines(out)["level1/2_swish_wrong"]["status"] == "wrong"  # a machine failure re-ran
    retry = bench(suite / "level2" / "5_swish_missing.py", "--candidates", candidates, "--out",
                  out, "--work", work, "--retry-failed", *FAST)
    assert retry.returncode == 0 and "0 already done, 1 to run" in " ".join(retry.stderr.split())
    after = lines(out)
    assert after["level1/1_prefix_sum"] == before["level1/1_prefix_sum"]
    assert after["level2/4_swish_build"] == before["level2/4_swish_build"]
    assert after["level2/5_swish_missing"]["status"] == "no_candidate"
    assert len(after) == 5


def test_compare_two_benches(resumed, tmp_path: Path) -> None:
    a, *_ = resumed
    b = tmp_path / "b"
    b.mkdir()
    changed = []
    for line in lines(a).values():
        if line["task"] == "level1/1_prefix_sum":
            line.update(correct=False, status="wrong", reward=-1.0)
        if line["task"] == "level1/2_swish_wrong":
            line.update(correct=True, status="ok", reward=3.0, speedup_vs_eager=2.0,
                        speedup_vs_compile=1.5, speedup_vs_compile_low=1.4)
        line["device_name"] = "NVIDIA H200"
        changed.append(json.dumps(line) + "\n")
    (b / "results.jsonl").write_text("".join(changed))
    shutil.copy(a / "bench.json", b / "bench.json")
    proc = bench("compare", a, b, "--json", tmp_path / "cmp.json")
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())
    assert "newly passing (1): level1/2_swish_wrong" in text
    assert "newly failing (1): level1/1_prefix_sum" in text
    assert "different GPUs" in text
    result = json.loads((tmp_path / "cmp.json").read_text())
    # A was judged without timing (--no-profile): nothing in it is faster; B has one of five
    assert result["metrics"]["overall"]["faster_than_compile_share"]["delta"] == \
        pytest.approx(1 / 5)
    assert result["metrics"]["overall"]["correct_share"]["delta"] == pytest.approx(0)
    assert max(len(row) for row in proc.stdout.splitlines()) <= 80
    assert os.path.exists(b / "results.jsonl")
