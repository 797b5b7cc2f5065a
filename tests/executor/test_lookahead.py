"""A slot prepares the next job while it judges one, and never more than its bound."""

from __future__ import annotations

from cudaopt.executor import Job, LocalExecutor, Sources
from cudaopt.executor.lanes import RETRIED_ALONE, lookahead_for
from cudaopt.judge import JudgeOptions
from tests.conftest import EXAMPLES

CPU = EXAMPLES / "fused_swish_cpu"


def _most_at_once(spans: list[list[float]]) -> int:
    events = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans],
                    key=lambda e: (e[0], e[1]))
    now = most = 0
    for _, step in events:
        now += step
        most = max(most, now)
    return most


def test_one_slot_with_a_lookahead_of_one_holds_at_most_two_jobs(tmp_path) -> None:
    sources = Sources.from_files(CPU / "model.py", CPU / "model_new.py")
    options = JudgeOptions(device="cpu", trials=1, profile=False)
    with LocalExecutor("cpu", root=tmp_path, lookahead=1) as executor:
        assert executor.lookahead == 1
        futures = [executor.submit(Job(f"j{i}", "judge", sources, options)) for i in range(5)]
        results = [f.result(timeout=600) for f in futures]
    assert all(r.infra_error is None and r.verdict["correct"] for r in results)
    spans = [r.extra["span"] for r in results]
    assert _most_at_once(spans) == 2  # one judged, one prepared: never a third


def test_a_judgement_short_of_device_memory_beside_other_lanes_is_judged_again_alone(
        tmp_path) -> None:
    """The memory the first try lacked may have been the other lanes': the second try
    overlaps no other job, their loaded judge workers are gone while it runs, and its
    verdict is the one that stands. The lanes' own processes stay, with the workers they
    started ahead, and judge their next jobs."""
    sources, options = Sources("t.py", "class Model: pass\n"), JudgeOptions(device="cpu")
    with LocalExecutor("cpu", root=tmp_path / "exec", lookahead=2,
                       plugins=("tests.executor.plugin",)) as executor:
        first = [executor.submit(Job(f"p{i}", "pause", sources, options,
                                     {"s": 2.0, "hold": True})) for i in range(2)]
        short = executor.submit(Job("m", "short_of_memory_once", sources, options,
                                    {"mark": str(tmp_path / "mark")}))
        later = [executor.submit(Job(f"q{i}", "pause", sources, options, {"s": 1.0}))
                 for i in range(3)]
        result = short.result(timeout=300)
        others = [future.result(timeout=300) for future in first + later]
    assert result.verdict["correct"] and result.attempts == 2
    assert result.extra["infra_errors"] == [RETRIED_ALONE]
    held = {o.extra["pid"] for o in others[:2]}
    assert all(o.extra["correct"] and o.extra["loaded"] and o.extra["spare"] for o in others[:2])
    loaded = set().union(*(o.extra["loaded"] for o in others[:2]))
    spare = set().union(*(o.extra["spare"] for o in others[:2]))
    assert held <= result.extra["siblings"]  # the lanes that had run pauses: still there,
    assert not loaded & result.extra["sibling_workers"]  # their loaded workers gone,
    assert spare <= result.extra["sibling_workers"]  # their spares kept,
    assert len({o.extra["pid"] for o in [*others, result]}) <= 3  # and no lane began anew
    start, end = result.extra["span"]
    assert all(o.extra["span"][1] <= start or o.extra["span"][0] >= end for o in others)
    assert _most_at_once([o.extra["span"] for o in others]) >= 2  # the lanes shared otherwise


def test_cpu_slots_prepare_nothing_ahead_by_default(tmp_path) -> None:
    with LocalExecutor("cpu", root=tmp_path) as executor:
        assert executor.lookahead == 0


GiB = 1 << 30


def test_gpu_slots_prepare_as_far_ahead_as_cores_and_device_memory_carry() -> None:
    assert lookahead_for(16, 1, 141 * GiB) == 3  # one H200, 16 cores: capped
    assert lookahead_for(8, 1, 141 * GiB) == 1  # few cores: 7 // 3 lanes, one ahead
    assert lookahead_for(16, 1, 40 * GiB) == 1  # small device memory: one ahead still
    assert lookahead_for(32, 4, 141 * GiB) == 1  # four slots share 28 spare cores
    assert lookahead_for(64, 2, None) == 3
    assert lookahead_for(2, 1, 80 * GiB) == 1  # never fewer than one
