"""Hacks that fake a correct result. Each candidate first goes through the naive harness
(naive.py), to prove the hack works where the countermeasure is missing; then the judge must
reject it, with reward -1 and a reason that names the rule."""

from __future__ import annotations

from cudaopt.judge import Status

from .harness import fools_naive, judge

STALE = "stale output: forward returned an output it had computed for an earlier call"


def test_unwritten_output_buffer_is_wrong() -> None:
    """Beats a harness that frees the reference output before the candidate runs (on a GPU,
    where the allocator reliably hands the block back: test_gpu.py proves it there)."""
    verdict = judge("unwritten_output")
    assert verdict.status is Status.WRONG and verdict.reward == -1
    assert "elements differ" in verdict.mismatch[1]


def test_input_mutation_is_a_violation_and_fools_no_reference() -> None:
    """Beats a harness that runs the reference after the candidate on the same inputs."""
    assert fools_naive("input_mutation", order="ref_after")
    verdict = judge("input_mutation")
    assert verdict.status is Status.VIOLATION and verdict.reward == -1
    assert "candidate modified input 0 in place" in verdict.violations
    assert verdict.mismatch, "the reference, in its own process, saw the original inputs"


def test_modifying_inputs_is_allowed_when_the_task_itself_does() -> None:
    """No false alarm: a task whose Model works in place on its input."""
    verdict = judge("honest_inplace", task="inplace_task.py", profile=True)
    assert verdict.status is Status.OK, verdict.violations or verdict.mismatch
    assert verdict.reward >= 1


def test_precomputed_outputs_for_a_predictable_seed_are_wrong() -> None:
    """Beats a harness with fixed seeds (42 and on): every checked call hits the table."""
    assert fools_naive("predictable_seed")
    verdict = judge("predictable_seed")
    assert verdict.status is Status.WRONG and verdict.reward == -1
    assert "elements differ" in verdict.mismatch[1]


def test_cache_by_tensor_identity_is_a_stale_output_on_refilled_inputs() -> None:
    """Beats a harness that times repeated calls on the same input tensors."""
    assert fools_naive("cache_by_identity")
    verdict = judge("cache_by_identity")
    assert verdict.status is Status.VIOLATION and verdict.reward == -1
    assert "refilled with new values" in verdict.mismatch[0]
    assert any(v.startswith(STALE) for v in verdict.violations), verdict.violations


def test_cache_by_data_pointer_is_a_stale_output_on_refilled_inputs() -> None:
    """Beats a harness that times repeated calls on one input tensor."""
    assert fools_naive("cache_by_pointer")
    verdict = judge("cache_by_pointer")
    assert verdict.status is Status.VIOLATION and verdict.reward == -1
    assert "refilled with new values" in verdict.mismatch[0]
    assert any(v.startswith(STALE) for v in verdict.violations), verdict.violations


def test_lazy_tensor_subclass_output_is_rejected() -> None:
    """Beats a harness that times forward and compares afterwards (the comparison runs the
    deferred work)."""
    assert fools_naive("lazy_subclass")
    verdict = judge("lazy_subclass")
    assert verdict.status is Status.VIOLATION and verdict.reward == -1
    assert ("output not accepted: out is a LazySwish, not a plain torch.Tensor"
            in verdict.violations)


def test_plain_tensor_with_overridden_methods_is_rejected() -> None:
    """Beats a harness that insists on a plain torch.Tensor and then calls `out.cpu()`."""
    assert fools_naive("lazy_plain_tensor")
    verdict = judge("lazy_plain_tensor")
    assert verdict.status is Status.VIOLATION and verdict.reward == -1
    assert any("output not accepted" in v and "carries its own" in v and " cpu," in v
               for v in verdict.violations), verdict.violations

