"""A slot prepares the next job while it judges one, and never more than its bound."""

from __future__ import annotations

from cudaopt.executor import Job, LocalExecutor, Sources
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


def test_cpu_slots_prepare_nothing_ahead_by_default(tmp_path) -> None:
    with LocalExecutor("cpu", root=tmp_path) as executor:
        assert executor.lookahead == 0
