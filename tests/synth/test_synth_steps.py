"""A composition torch refuses anywhere is one rejected try, named after the step it failed
in, never the end of the run (issue 40): sizing starts at a batch the chain takes, and the
runner turns a step that raises into a manifest line. The running filters' child process is
stood in for, so these tests take seconds."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

import pytest

from cudaopt.synth import runner, sources
from cudaopt.synth.api import cache_dir
from cudaopt.synth.calibrate import load_factors
from cudaopt.synth.catalog import load_catalog, rules
from cudaopt.synth.evaluate import FILTERS, Outcome
from cudaopt.synth.manifest import Manifest
from cudaopt.synth.shapes import Composition, Step, size_batch
from cudaopt.synth.sources import Candidate, RandomSource

WINDOW = (1.0, 20.0)


class StandIn:
    """The prober without its child process: each task gets the next outcome in `script`
    (raised when it is an exception), or is kept once the script is spent."""

    script: list[Outcome | Exception] = []

    def __init__(self, *args: object) -> None:
        pass

    def __enter__(self) -> StandIn:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def evaluate(self, task: Path) -> Outcome:
        outcome = self.script.pop(0) if self.script else Outcome("kept", 2.0, 1.0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome


class Scripted:
    def __init__(self, candidates: list[Candidate]) -> None:
        self.candidates = candidates

    def propose(self, attempt: int, kept: list[str]) -> Candidate:
        return self.candidates[attempt]


def random_source(seed: int) -> RandomSource:
    catalog = load_catalog(cache_dir())
    return RandomSource(catalog, rules(), seed, 5, "cpu", WINDOW,
                        load_factors(catalog, "cpu", cache_dir()))


def test_sizing_starts_at_the_smallest_batch_a_batchnorm_takes() -> None:
    ops = {op["id"]: op for op in load_catalog(cache_dir())}
    comp = Composition([Step("nn.BatchNorm1d"), Step("nn.MaxPool1d")], [1, 256])
    tiny = (1e-9, 2e-9)  # a window only the smallest batch comes near
    assert size_batch(comp, ops, rules()["cost"]["cpu"], tiny, {}) == 2


def test_a_step_that_raises_rejects_its_composition_there_and_the_run_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = random_source(7)

    def refuse(*args: object, **kwargs: object) -> int:
        raise ValueError("Expected more than 1 value per channel when training")

    with monkeypatch.context() as patched:
        patched.setattr(sources, "size_batch", refuse)
        unsized = source.propose(0, [])
    candidates = [unsized, *(source.propose(attempt, []) for attempt in (1, 2, 3))]
    monkeypatch.setattr(sources, "resize_batch", refuse)  # the second is resized: it raises
    monkeypatch.setattr(runner, "Prober", StandIn)
    monkeypatch.setattr(StandIn, "script", [Outcome("eager_window", eager_ms=0.2),
                                            json.JSONDecodeError("cut short", "{", 1)])
    summary = runner.Run(Scripted(candidates), tmp_path, 1, 7, "cpu", WINDOW).synthesize()
    lines = Manifest.open(tmp_path).lines
    assert [line["status"] for line in lines] == ["sizing", "sizing", "runs_eager", "kept"]
    assert lines[0]["ops"] == candidates[0].ops and lines[0]["ops"]
    assert lines[0]["error"].startswith("ValueError: Expected more than 1 value")
    assert "JSONDecodeError: cut short" in lines[2]["error"]
    assert summary.kept_now == 1 and (tmp_path / lines[3]["file"]).is_file()


@pytest.mark.slow
def test_thirty_seeds_end_every_try_in_a_manifest_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Composition, sizing and building for 12 tries of each of 30 seeds, every running
    filter passed by the stand-in; seed 7's fifth try is the BatchNorm of issue 40."""
    monkeypatch.setattr(runner, "Prober", StandIn)
    statuses: Counter[str] = Counter()
    started = time.perf_counter()
    for seed in range(30):
        out = tmp_path / str(seed)
        runner.Run(random_source(seed), out, 12, seed, "cpu", WINDOW, max_tries=12).synthesize()
        lines = Manifest.open(out).lines
        assert len(lines) == 12
        statuses.update(line["status"] for line in lines)
        if seed == 7:
            assert lines[4]["ops"][0] == "nn.BatchNorm1d" and lines[4]["status"] == "kept"
    print(f"30 seeds x 12 tries in {time.perf_counter() - started:.1f} s: {dict(statuses)}")
    assert set(statuses) <= {"kept", *FILTERS}
    assert not statuses["sizing"] and not statuses["building"], statuses
