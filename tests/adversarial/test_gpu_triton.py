"""Triton candidates (tests/adversarial/gpu/triton): judged as CUDA ones are, by the same
rules. An honest fused kernel passes; a constant, a stale output, a side-stream race and a
forbidden aten operator are refused; a candidate whose calls launch no kernel of its own
earns no speed milestone, with or without the breakdown."""

from __future__ import annotations

import pytest

from cudaopt.judge import Status
from cudaopt.judge.checks.streams import RULE, STALE

from .harness import TRITON, judge

pytestmark = pytest.mark.gpu
CUDA = dict(folder=TRITON, device="cuda")


def test_an_honest_triton_kernel_is_accepted_and_named() -> None:
    verdict = judge("honest", profile=True, **CUDA)
    assert verdict.status is Status.OK, verdict.violations or verdict.mismatch or verdict.error
    assert verdict.backend == "triton"
    assert verdict.kernels_ran and any("_swish" in name for name in verdict.kernels_ran)
    assert verdict.speedup_vs_eager and verdict.speedup_vs_eager > 1.2
    assert verdict.reward >= 2, verdict.warnings


def test_a_triton_constant_is_refused_by_the_signal_check() -> None:
    verdict = judge("constant", task="softmax_task.py", **CUDA)
    assert verdict.reward == -1
    assert any("does not depend on the input" in v for v in verdict.violations), (
        verdict.violations, verdict.mismatch)


def test_a_stale_triton_output_is_refused() -> None:
    verdict = judge("stale", **CUDA)
    assert verdict.reward == -1
    assert verdict.mismatch or any(v.startswith(STALE) for v in verdict.violations)


def test_a_triton_launch_on_a_side_stream_is_a_race() -> None:
    verdict = judge("side_stream", profile=True, **CUDA)
    assert verdict.status is Status.VIOLATION and verdict.reward == -1
    assert any(v.startswith(RULE) for v in verdict.violations), verdict.violations


def test_an_aten_operator_beside_a_triton_kernel_is_forbidden() -> None:
    verdict = judge("aten_inside", **CUDA)
    assert verdict.status is Status.VIOLATION and verdict.reward == -1
    assert any("aten.sigmoid" in v for v in verdict.violations), verdict.violations


def test_a_candidate_that_launches_none_of_its_own_kernels_earns_no_milestone() -> None:
    verdict = judge("torch_only", profile=True, allow=["*"], **CUDA)
    assert verdict.status is Status.OK, verdict.error
    assert verdict.kernels_ran == [] and verdict.reward <= 1
    assert any("no kernel of the candidate's own" in w for w in verdict.warnings)


def test_without_a_breakdown_a_faster_candidate_still_needs_a_kernel_of_its_own() -> None:
    """bench's candidate mode and the reward service make no breakdown: where the figures
    would earn a milestone, one profiled call still names the candidate's kernels."""
    verdict = judge("torch_fused", profile=True, breakdown=False, allow=["*"], **CUDA)
    assert verdict.status is Status.OK, verdict.error
    assert verdict.speedup_vs_eager and verdict.speedup_vs_eager > 1.5  # the speed is there
    assert "warm.kernels" in verdict.phases_s
    assert verdict.kernels_ran == [] and verdict.reward == 1  # and none of it its own


def test_without_a_breakdown_an_honest_triton_kernel_is_named() -> None:
    verdict = judge("honest", profile=True, breakdown=False, **CUDA)
    assert verdict.status is Status.OK, verdict.violations or verdict.mismatch or verdict.error
    assert verdict.breakdown is None
    assert verdict.kernels_ran and any("_swish" in name for name in verdict.kernels_ran)
    assert verdict.reward >= 2, verdict.warnings
