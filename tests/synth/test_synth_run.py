"""What `cudaopt synth` writes: tasks the judge accepts unchanged, a manifest line per try,
the same files for the same seed, and a second run that continues without duplicates."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cudaopt.synth.similarity import file_tokens, similarity
from tests.conftest import ROOT
from tests.synth.conftest import SEED, WINDOW, manifest, synth, task_files

pytestmark = pytest.mark.slow
FIELDS = {"name", "ops", "shapes", "status", "eager_ms", "compile_ms", "max_similarity", "seed"}


def test_every_kept_task_passes_check_with_its_identity_candidate(first_run, tmp_path) -> None:
    out, printed = first_run
    lines = manifest(out)
    assert all(FIELDS <= set(line) for line in lines)
    kept = [line for line in lines if line["status"] == "kept"]
    assert len(kept) == 2 and sorted(task_files(out)) == sorted(k["file"] for k in kept)
    low, high = map(float, WINDOW.split(","))
    for line in kept:
        assert low <= line["eager_ms"] <= high and line["compile_ms"] > 0
        assert line["name"].split("_", 1)[1] == "_".join(op.split(".")[1] for op in line["ops"])
        folder = tmp_path / line["name"]
        folder.mkdir()
        source = (out / line["file"]).read_text()
        (folder / "model_new.py").write_text(re.sub(r"\bModel\b", "ModelNew", source))
        done = subprocess.run([sys.executable, "-m", "cudaopt.cli", "check", out / line["file"],
                               folder / "model_new.py", "--device", "cpu", "--allow", "*",
                               "--no-profile", "--trials", "2"], capture_output=True,
                              text=True, timeout=600, cwd=ROOT)
        assert done.returncode == 0, done.stdout + done.stderr
    assert "kept with 2 operators" in printed or "kept with 1 operator" in printed
    assert max(len(row) for row in printed.splitlines()) <= 80


def test_the_same_seed_writes_the_same_files(first_run, tmp_path) -> None:
    out, _ = first_run
    again = tmp_path / "again"
    done = synth("--n", "2", "--out", again, "--seed", SEED, "--eager-ms", WINDOW)
    assert done.returncode == 0, done.stdout + done.stderr
    assert task_files(again) == task_files(out)


def test_a_second_run_continues_to_n_without_duplicates(first_run, tmp_path) -> None:
    out, _ = first_run
    folder = tmp_path / "continued"
    shutil.copytree(out, folder)
    before, old = task_files(folder), manifest(folder)
    done = synth("--n", "3", "--out", folder, "--seed", SEED, "--eager-ms", WINDOW)
    assert done.returncode == 0, done.stdout + done.stderr
    files, lines = task_files(folder), manifest(folder)
    assert len(files) == 3 and all(files[name] == text for name, text in before.items())
    assert lines[:len(old)] == old
    assert [line["attempt"] for line in lines] == list(range(len(lines)))
    # each try of this run is a line of its own (a log shows no progress bar)
    tries = [line for line in done.stderr.splitlines() if ", try " in line]
    assert len(tries) == len(lines) - len(old) and tries[-1].startswith("3/3 kept")
    new = next(p for p in folder.glob("*.py") if p.name not in before)
    assert all(similarity(file_tokens(new), file_tokens(folder / name)) <= 0.9
               for name in before)


def test_bad_input_is_refused_before_anything_runs(tmp_path: Path) -> None:
    done = synth("--n", "1", "--out", tmp_path / "x", "--eager-ms", "5,1")
    assert done.returncode == 2 and "--eager-ms" in done.stderr
    done = synth("--n", "1", "--out", tmp_path / "x", "--against", tmp_path / "missing")
    assert done.returncode == 2 and "--against" in done.stderr
    assert not (tmp_path / "x").exists()


def test_a_task_whose_estimate_missed_the_window_is_resized_by_its_measured_time(
        first_run, tmp_path: Path) -> None:
    """A cost table 64 times too fast sizes every task far over the window (as the
    CPU-calibrated guesses missed it on an H200, the other way); the measured time sizes
    it again, once. Over, not under: a loaded machine only makes a task slower, so an
    oversized task stays out of the window on any machine, an undersized one may not."""
    from cudaopt.synth.api import cache_dir
    from cudaopt.synth.calibrate import load_factors
    from cudaopt.synth.catalog import load_catalog, rules
    from cudaopt.synth.runner import Run
    from cudaopt.synth.sources import RandomSource

    conf = rules()
    catalog, cost = load_catalog(cache_dir()), dict(conf["cost"]["cpu"])
    factors = load_factors(catalog, "cpu", cache_dir())  # cached by `first_run`
    cost.update(flops_per_s=cost["flops_per_s"] * 64, bytes_per_s=cost["bytes_per_s"] * 64,
                op_ms=cost["op_ms"] / 64)
    window = (0.25, 4.0)
    source = RandomSource(catalog, {**conf, "cost": {"cpu": cost}}, SEED, 2, "cpu", window,
                          factors)
    summary = Run(source, tmp_path, 1, SEED, "cpu", window, max_tries=8).synthesize()
    lines = manifest(tmp_path)
    resized = [line for line in lines if "resized_from" in line]
    assert summary.kept_now == 1 and resized, lines
    for line in resized:
        before = line["resized_from"]
        assert before["eager_ms"] < window[0] or before["eager_ms"] > window[1]
        assert before["shapes"]["inputs"][0][0] != line["shapes"]["inputs"][0][0]
    kept = next(line for line in lines if line["status"] == "kept")
    assert window[0] <= kept["eager_ms"] <= window[1]
    if "resized_from" in kept:  # the file holds the batch that was measured in the window
        batch = kept["shapes"]["inputs"][0][0]
        assert f"batch_size = {batch}" in (tmp_path / kept["file"]).read_text()
