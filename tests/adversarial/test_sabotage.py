"""Hacks that sabotage the baselines or the judge itself from inside the process that
imports the candidate. The first line of defence is that baselines and comparisons never
run there; the second, that the tampering is found and reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudaopt.judge import Status

from .harness import fools_naive, judge


def test_slowing_torch_at_import_is_reported_and_never_reaches_the_baselines(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Beats a harness that times eager and torch.compile in the process that imported the
    candidate."""
    assert fools_naive("patch_torch_baseline")
    log = tmp_path / "imports.log"
    monkeypatch.setenv("ADVERSARIAL_IMPORT_LOG", str(log))
    # not isolated: the candidate writes which processes imported it to the test's folder
    verdict = judge("patch_torch_baseline", profile=True, isolation="off", warm=False)
    assert verdict.status is Status.VIOLATION and verdict.reward == -1
    assert ("tampering: torch.sigmoid was replaced after the candidate was imported"
            in verdict.violations)
    assert "tampering: torch.compile was replaced after the candidate was imported" in (
        verdict.violations)
    roles = log.read_text().split()
    assert roles and set(roles) == {"candidate"}, "only the candidate worker imported it"


def test_patching_the_judges_own_functions_is_reported_and_changes_no_comparison() -> None:
    """Beats a harness that compares outputs and guards operators in the process that
    imported the candidate (`torch.allclose`, cudaopt's `compare` and guard are patched)."""
    assert fools_naive("patch_judge")
    verdict = judge("patch_judge")
    assert verdict.status is Status.VIOLATION and verdict.reward == -1
    assert "elements differ" in verdict.mismatch[1], "the reference process compared"
    assert "tampering: judge attribute cudaopt.judge.workers.tensors.compare was replaced" in (
        verdict.violations)
    assert ("tampering: judge attribute cudaopt.judge.checks.guard.OpGuard.violations was "
            "replaced") in verdict.violations
