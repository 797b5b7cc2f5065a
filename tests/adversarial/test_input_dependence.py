"""Outputs that ignore the input: a constant, zeros under atol, a sub-sample, an expected
value, a stale result. Each hack fools a harness comparing with allclose on fresh draws
from get_inputs() (naive.py); the judge must refuse it under a rule naming what it did.
Honest kernels whose outputs are near-constant, tiny or read in bf16 must pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudaopt.judge import JudgeOptions, Status, Verdict, check
from cudaopt.judge.checks.signal import RULE, SCALE_RULE
from cudaopt.judge.checks.streams import STALE

from .harness import HERE, fools_naive, judge

INPUTS = HERE / "inputs" / "candidates"


def _refused_for_ignoring_input(verdict: Verdict) -> None:
    assert verdict.status is Status.VIOLATION and verdict.reward == -1, verdict
    assert not verdict.correct
    assert any(v.startswith(RULE) for v in verdict.violations), verdict.violations


def _passes(verdict: Verdict) -> None:
    assert verdict.status is Status.OK, verdict.violations or verdict.mismatch or verdict.error
    assert verdict.correct and verdict.reward >= 1
    assert len(verdict.inputs_structured) + len(verdict.inputs_skipped) == 3, verdict


@pytest.mark.parametrize(("name", "task"), [
    ("constant_statistic", "hinge_task.py"),  # a constant equal to the task's statistic
    ("zeros_softmax", "softmax_task.py"),  # zeros where every value is below atol
    ("expected_value", "energy_task.py"),  # an expected-value shortcut
])
def test_an_output_that_ignores_the_input_is_refused(name: str, task: str) -> None:
    assert fools_naive(name, folder=INPUTS, task=task)
    _refused_for_ignoring_input(judge(name, INPUTS, task=task))


def test_a_subsampled_reduction_is_refused() -> None:
    """A mean over a tenth of the rows: wrong on an input derived from the task's draws with
    outliers or a rescaled block where its sample does not look, and named by the signal
    check over the task's own draws, where it misses the reference's moves. That second
    check holds it by a margin its sub-sample can fall inside by chance (one CI run of
    2026-12-04): a refusal by either counts."""
    assert fools_naive("subsampled_mse", folder=INPUTS, task="mse_task.py")
    verdict = judge("subsampled_mse", INPUTS, task="mse_task.py")
    assert verdict.reward == -1 and not verdict.correct, verdict
    on_derived = verdict.status is Status.WRONG and "derived from the task's draws" in (
        verdict.mismatch[0] if verdict.mismatch else "")
    assert on_derived or any(v.startswith(RULE) for v in verdict.violations), verdict


def test_an_offset_far_below_atol_but_above_the_outputs_size_is_refused() -> None:
    assert fools_naive("offset_softmax", folder=INPUTS, task="softmax_task.py")
    verdict = judge("offset_softmax", INPUTS, task="softmax_task.py")
    assert verdict.status is Status.VIOLATION and verdict.reward == -1, verdict
    assert not verdict.correct
    assert any(v.startswith(SCALE_RULE) for v in verdict.violations), verdict.violations


def test_a_stale_output_is_named_as_such() -> None:
    verdict = judge("stale_output")
    assert verdict.status is Status.VIOLATION and verdict.reward == -1
    assert any(v.startswith(STALE) for v in verdict.violations), verdict.violations
    assert not any("unordered" in v for v in verdict.violations)


def test_an_honest_reduction_with_a_near_constant_output_passes() -> None:
    _passes(judge("honest_hinge", INPUTS, task="hinge_task.py"))


def test_an_honest_softmax_over_a_long_row_passes() -> None:
    _passes(judge("honest_softmax", INPUTS, task="softmax_task.py"))


def test_an_honest_bf16_kernel_within_tolerance_passes() -> None:
    _passes(judge("honest_bf16_mse", INPUTS, task="mse_task.py"))


def test_an_honest_bf16_softmax_over_a_long_row_passes() -> None:
    _passes(judge("honest_bf16_softmax", INPUTS, task="softmax_task.py"))


@pytest.mark.parametrize(("name", "task"), [
    ("honest_bf16_hinge", "hinge_task.py"),  # 1.000 +- 0.003, written as 1.0 or a neighbour
    ("honest_bf16_out_mse", "mse_task.py"),  # 2.000 +- 0.003, written as 2.0 every draw
])
def test_an_honest_statistic_written_in_bf16_passes(name: str, task: str) -> None:
    # the task's draws move it by less than bf16's resolution: it follows them only at that
    # resolution, and the inputs of other structure show it follows its input
    _passes(judge(name, INPUTS, task=task))


def test_a_sub_sample_written_in_bf16_is_refused() -> None:
    # held to the draws at bf16's resolution only, it still misses the outliers and blocks
    assert fools_naive("subsampled_bf16_mse", folder=INPUTS, task="mse_task.py")
    verdict = judge("subsampled_bf16_mse", INPUTS, task="mse_task.py")
    assert not verdict.correct and verdict.reward == -1, verdict
    assert verdict.status in (Status.WRONG, Status.VIOLATION), verdict


def test_an_honest_kernel_rounding_a_zero_output_otherwise_passes() -> None:
    _passes(judge("honest_centered", INPUTS, task="centered_task.py"))


SEED = 1
OVERFLOWING_TASK = '''import torch
import torch.nn as nn


class Model(nn.Module):
    """Finite on the task's own draws; a few large outliers overflow it."""

    def forward(self, x):
        return torch.exp(x.abs() * 10)


def get_inputs():
    return [torch.randn(64)]


def get_init_inputs():
    return []
'''


def test_a_derived_input_the_reference_cannot_handle_is_skipped_and_said(tmp_path: Path) -> None:
    (tmp_path / "task.py").write_text(OVERFLOWING_TASK)
    (tmp_path / "model_new.py").write_text(OVERFLOWING_TASK.replace("class Model(",
                                                                    "class ModelNew("))
    # A fixed judge seed fixes which derived inputs are drawn: a secret plan may pair the
    # outliers with "sparse", which can zero the outlier out again (then nothing overflows).
    verdict = check(tmp_path / "task.py", tmp_path / "model_new.py",
                    JudgeOptions(device="cpu", allow=["*"], profile=False, seed=SEED))
    assert verdict.status is Status.OK and verdict.correct, verdict
    assert any(s.startswith("spiky") and "non-finite" in s for s in verdict.inputs_skipped), (
        verdict.inputs_skipped)
    assert verdict.to_json()["inputs_skipped"] == verdict.inputs_skipped
