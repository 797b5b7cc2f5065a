"""A GPU slot's lanes sized by what their tasks hold: footprints learnt from verdicts and
kept across runs, and a task that needs the whole device judged alone from its first try."""

from __future__ import annotations

import json

from cudaopt.executor import Job, JobResult, LocalExecutor, Sources
from cudaopt.executor.footprints import CONTEXT_BYTES, Footprints
from cudaopt.judge import JudgeOptions
from tests.executor.test_lookahead import _most_at_once

GiB = 1 << 30
PLUGIN = ("tests.executor.plugin",)


def _task(name: str) -> Sources:
    return Sources(f"{name}.py", f"class Model: pass\n# {name}\n")


def _overlaps(span: list[float], others: list[list[float]]) -> bool:
    return any(o[0] < span[1] and span[0] < o[1] for o in others)


def test_lanes_start_jobs_only_while_their_tasks_footprints_fit(tmp_path) -> None:
    """10 GiB per slot: three 3 GiB jobs side by side; one of 6 GiB, more than half the
    device, beside none (though one 3 GiB job would fit beside it)."""
    light, heavy = _task("light"), _task("heavy")
    path = tmp_path / "footprints.json"
    path.write_text(json.dumps({light.task_key: 3 * GiB, heavy.task_key: 6 * GiB}))
    options = JudgeOptions()
    with LocalExecutor("cpu", root=tmp_path / "exec", lookahead=2, plugins=PLUGIN,
                       device_bytes=10 * GiB, footprints=path) as executor:
        jobs = [("l0", light), ("l1", light), ("l2", light), ("h0", heavy), ("l3", light)]
        futures = {name: executor.submit(Job(name, "pause", sources, options, {"s": 1.5}))
                   for name, sources in jobs}
        spans = {name: f.result(timeout=300).extra["span"] for name, f in futures.items()}
    assert not _overlaps(spans["h0"], [s for n, s in spans.items() if n != "h0"])
    assert _most_at_once([s for n, s in spans.items() if n.startswith("l")]) == 3


def test_a_footprint_learnt_in_one_run_sizes_the_lanes_of_the_next(tmp_path) -> None:
    """The first run counts the task as an equal share and judges it beside the others;
    it learns that its judgement held 9.5 GiB (11.5 with the contexts), more than the
    slot's 10: the next run judges it alone from its first try, the other lanes'
    processes closed."""
    task, path, options = _task("big"), tmp_path / "footprints.json", JudgeOptions()
    for run in (1, 2):
        with LocalExecutor("cpu", root=tmp_path / f"exec{run}", lookahead=2, plugins=PLUGIN,
                           device_bytes=10 * GiB, footprints=path) as executor:
            first = [executor.submit(Job(f"p{i}", "pause", _task(f"o{i}"), options,
                                         {"s": 1.5})) for i in range(2)]
            big = executor.submit(Job("b", "held", task, options, {"gib": 9.5, "s": 0.5}))
            result = big.result(timeout=300)
            others = [f.result(timeout=300).extra["span"] for f in first]
        assert result.verdict["correct"] and result.attempts == 1
        assert Footprints(path).need(task.task_key) == int(9.5 * GiB) + CONTEXT_BYTES
        if run == 1:
            assert _overlaps(result.extra["span"], others)
        else:
            assert not _overlaps(result.extra["span"], others)
            assert result.extra["siblings"] == set()


def test_footprints_kept_on_disk_survive_a_broken_file_and_other_writers(tmp_path) -> None:
    """An unreadable file is no footprints; two executors learning at once keep both."""
    path = tmp_path / "footprints.json"
    path.write_text("{not json")
    one, two = Footprints(path), Footprints(path)
    assert one.need("a") is None
    cuda = {"device": "cuda", "device_memory_gib": 1.0}
    one.learn("a", JobResult("j", verdict=cuda))
    two.learn("b", JobResult("j", verdict={**cuda, "device_memory_gib": 2.0}))
    two.learn("c", JobResult("j", verdict={"device": "cpu", "device_memory_gib": None}))
    assert json.loads(path.read_text()) == {"a": GiB + CONTEXT_BYTES,
                                             "b": 2 * GiB + CONTEXT_BYTES}
