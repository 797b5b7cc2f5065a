"""A GPU slot's lanes sized by what their tasks hold: footprints learnt from verdicts and
kept across runs, and a task that needs the whole device judged alone from its first try."""

from __future__ import annotations

import json

from cudaopt.executor import Job, JobResult, LocalExecutor, Sources
from cudaopt.executor.estimate import PER_BYTE, WEIGHT_COPIES, Estimator
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
    slot's 10: the next run judges it alone from its first try, no judge worker of the
    other lanes beside it."""
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
            assert result.extra["sibling_workers"] == set()


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


#: A task whose input and output are 1 GiB each, its weights 64 MiB: nothing of it is
#: ever allocated where it is built on the meta device
LARGE = """
import torch
print("a task's own output")

class Model(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(n, n))

    def forward(self, x):
        return x * 2

def get_init_inputs():
    return [4096]

def get_inputs():
    return [torch.randn(1 << 28)]
"""


def test_a_task_is_sized_on_the_meta_device_and_what_cannot_be_sized_is_no_guess() -> None:
    """Inputs, outputs and weights counted without allocating them; a task that fails, or
    hangs past the timeout, gives no guess and costs the next task nothing."""
    failing = Sources("bad.py", "raise RuntimeError('no')\n")
    hanging = Sources("hang.py", "while True:\n    pass\n")
    estimator = Estimator(timeout_s=3)
    try:
        assert estimator.bytes_for(Sources("large.py", LARGE)) == (
            PER_BYTE * 2 * GiB + WEIGHT_COPIES * 4096 * 4096 * 4)
        assert estimator.bytes_for(failing) is None
        assert estimator.bytes_for(hanging) is None
        assert estimator.bytes_for(Sources("large2.py", LARGE)) == PER_BYTE * 2 * GiB + (
            WEIGHT_COPIES * 64 << 20)
    finally:
        estimator.close()


def test_a_task_never_judged_here_that_would_fill_the_device_is_judged_alone_at_once(
        tmp_path) -> None:
    """Guessed at 16 GiB and more from its sizes, over half the slot's 10, the task is judged
    alone from its first try, while the small ones beside it, never judged either, keep
    their equal shares side by side."""
    options = JudgeOptions()
    with LocalExecutor("cpu", root=tmp_path / "exec", lookahead=2, plugins=PLUGIN,
                       device_bytes=10 * GiB, footprints=tmp_path / "none.json") as executor:
        jobs = [("l0", _task("a")), ("l1", _task("b")), ("l2", _task("c")),
                ("big", Sources("big.py", LARGE)), ("l3", _task("d"))]
        futures = {name: executor.submit(Job(name, "pause", sources, options, {"s": 1.5}))
                   for name, sources in jobs}
        spans = {name: f.result(timeout=300).extra["span"] for name, f in futures.items()}
    assert futures["big"].result().attempts == 1
    assert not _overlaps(spans["big"], [s for n, s in spans.items() if n != "big"])
    assert _most_at_once([s for n, s in spans.items() if n != "big"]) == 3
