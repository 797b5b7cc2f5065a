"""The CUDA paths (tests/adversarial/gpu/candidates): work hidden on a side stream, an
unwritten output that the caching allocator fills with the right answer, and honest kernels
that must pass: their own stream properly synchronized, cuBLAS through its C API."""

from __future__ import annotations

import pytest

from cudaopt.judge import Status

from .harness import GPU, fools_naive, judge

pytestmark = pytest.mark.gpu
CUDA = dict(folder=GPU, device="cuda")


RULE = "work left unordered with the current stream"


def test_side_stream_work_is_refused_by_the_stream_check() -> None:
    """Beats a harness that times with CUDA events on the current stream."""
    assert fools_naive("side_stream", **CUDA)
    verdict = judge("side_stream", profile=True, **CUDA)
    assert verdict.status is Status.VIOLATION and verdict.reward == -1
    assert any(v.startswith(RULE) for v in verdict.violations), verdict.violations


@pytest.mark.parametrize(("name", "task", "how"), [
    ("diag_forked_stream", "diag_task.py", "unjoined"),
    ("diag_private_stream", "diag_task.py", "CUDA graph"),
    ("forked_stream", "task.py", "unjoined"),
    ("forked_stream_sync", "task.py", "after the current stream had finished"),
])
def test_work_left_on_other_streams_is_a_named_violation(name: str, task: str, how: str) -> None:
    """Light and heavy, forked from the current stream or not: each is refused by a
    deterministic check, and the verdict names the rule and which check ran."""
    verdict = judge(name, task=task, profile=True, **CUDA)
    assert verdict.status is Status.VIOLATION and verdict.reward == -1, verdict.error
    assert any(v.startswith(RULE) and how in v for v in verdict.violations), verdict.violations
    assert "CUDA graph capture" in verdict.stream_check or "snapshot" in verdict.stream_check


@pytest.mark.parametrize(("name", "task", "check"), [
    ("diag_honest", "diag_task.py", "CUDA graph"),
    ("diag_joined_streams", "diag_task.py", "CUDA graph"),
    ("diag_legacy_stream", "diag_task.py", "current-stream snapshot"),
    ("honest_streams", "task.py", "CUDA graph"),
])
def test_honest_stream_use_passes_and_says_which_check_ran(name: str, task: str,
                                                           check: str) -> None:
    verdict = judge(name, task=task, profile=True, **CUDA)
    assert verdict.status is Status.OK, verdict.violations or verdict.mismatch or verdict.error
    assert verdict.stream_check.startswith(check), verdict.stream_check
    assert verdict.reward >= 1 and not any("not all seen by events" in w
                                           for w in verdict.warnings), verdict.warnings


def test_unwritten_output_fools_the_naive_harness_but_not_the_judge() -> None:
    """Beats a harness that frees the reference output before the candidate runs: the
    allocator hands the candidate the block that holds the answer."""
    assert fools_naive("unwritten_output", **CUDA)
    verdict = judge("unwritten_output", **CUDA)
    assert verdict.status is Status.WRONG and verdict.reward == -1
    assert "elements differ" in verdict.mismatch[1]


@pytest.mark.parametrize("name", ["honest_tiled", "honest_streams", "honest_cublas"])
def test_honest_cuda_kernels_pass(name: str) -> None:
    verdict = judge(name, profile=True, **CUDA)
    assert verdict.status is Status.OK, verdict.violations or verdict.mismatch or verdict.error
    assert verdict.correct and verdict.violations == [] and verdict.reward >= 1
