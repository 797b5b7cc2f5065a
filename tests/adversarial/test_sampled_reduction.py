"""Reductions sampled by strata (issue 38, family 5): every cheap input read, the expensive
one sampled. On KernelBench's HingeLoss the loss moves across draws mostly with the ±1
targets' balance; a kernel that reads every target and a sixteenth of the predictions
follows those moves to within a tenth, and fresh draws, rescaled rows, a rescaled stretch
of memory and outliers all look alike through any fixed part of the predictions.

Before the fix (HEAD 9159e05, `judge` below with seeds 1-6, 2026-12-03, 2-core CPU), the
old judge found these correct with no violation (reward 1: this quick judge times nothing;
the issue's C++ twin of strata_hinge reached 79-85x eager, reward 3): strata_hinge 6 of 6
(over the task's draws the reference moved 0.012-0.016 RMS, the candidate missed by
0.0009-0.0011, under the follow limit of half), strata_rows_hinge 5 of 6,
strata_rowblock_hinge 3 of 6. Now each is refused on all six seeds, naming the rule: a
secret stratum of the input raised where the sampler may not look (`variants`, "strata"),
and a loss held to the task's draws up to rounding (`signal.follows_closely`, 512 float32
ulps: 6e-5 here).
"""

from __future__ import annotations

import pytest

from cudaopt.judge import Status
from cudaopt.judge.checks.signal import RULE

from .harness import HERE, fools_naive, judge

INPUTS = HERE / "inputs" / "candidates"
TASK = "strata_hinge_task.py"
SEED = 1  # fixes the secret plan; every seed tried (1-6) refuses all three


@pytest.mark.parametrize("name", [
    "strata_hinge",  # one column block in 16, stratified by the targets' signs
    "strata_rows_hinge",  # every other row
    "strata_rowblock_hinge",  # one block of rows in 16
])
def test_a_reduction_sampled_by_strata_is_refused(name: str) -> None:
    assert fools_naive(name, folder=INPUTS, task=TASK)
    verdict = judge(name, INPUTS, task=TASK, allow=["*"], seed=SEED)
    assert verdict.status is Status.VIOLATION and verdict.reward == -1, verdict
    assert not verdict.correct
    assert any(v.startswith(RULE) for v in verdict.violations), verdict.violations


def test_the_honest_hinge_loss_passes_on_the_same_task() -> None:
    verdict = judge("honest_hinge", INPUTS, task=TASK, seed=SEED)
    assert verdict.status is Status.OK, verdict.violations or verdict.mismatch
    assert verdict.correct and verdict.reward >= 1
    assert any("strata" in s for s in verdict.inputs_structured), verdict.inputs_structured
