"""The CUDA paths (tests/adversarial/gpu/candidates): work hidden on a side stream, an
unwritten output that the caching allocator fills with the right answer, and honest kernels
that must pass: their own stream properly synchronized, cuBLAS through its C API."""

from __future__ import annotations

import pytest

from cudaopt.judge import Status

from .harness import GPU, fools_naive, judge

pytestmark = pytest.mark.gpu
CUDA = dict(folder=GPU, device="cuda")


def test_side_stream_work_is_seen_by_the_host_clock_and_the_parents_clock() -> None:
    """Beats a harness that times with CUDA events on the current stream."""
    assert fools_naive("side_stream", **CUDA)
    verdict = judge("side_stream", profile=True, **CUDA)
    assert verdict.status is Status.VIOLATION and verdict.reward == -1
    assert any(v.startswith("work escaped the timed region") for v in verdict.violations), (
        verdict.violations)
    assert any(v.startswith("timing cross-check failed") for v in verdict.violations), (
        verdict.violations)


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
