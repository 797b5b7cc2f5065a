"""Hacks that rewrite the judge from inside the candidate's own process (DESIGN.md §3,
item 12): its command table, its kept copies of outputs, the draw of its inputs, its
clocks. Each was accepted by the judge before it took nothing from that process on trust:
judged on this CPU task with the options below on 2026-12-03, the old judge said correct
and clean for all four (figures in each test). Nothing here asks the naive harness: these
hacks reach for the judge's own worker, which a naive harness does not have."""

from __future__ import annotations

import re
from typing import Any

import pytest

from cudaopt.judge import Status

from .harness import GPU, judge

#: The CPU task (a swish) and the CUDA one (a matmul), each with the same four hacks.
PLACES = [pytest.param({}, id="cpu"),
          pytest.param(dict(folder=GPU, device="cuda"), id="cuda", marks=pytest.mark.gpu)]


@pytest.mark.parametrize("place", PLACES)
def test_a_candidate_that_rewrites_the_judges_command_table_computes_nothing_and_fails(
        place: dict[str, Any]) -> None:
    """Its `dump` handed over no copies, which the old judge took as agreement: correct,
    12.33x eager, no violation."""
    verdict = judge("rewrite_replies", profile=True, **place)
    assert verdict.status is Status.WRONG and verdict.reward == -1
    assert "the candidate handed over no output for this call" in verdict.mismatch


@pytest.mark.parametrize("place", PLACES)
def test_the_answer_written_into_the_judges_copy_after_the_call_is_refused(
        place: dict[str, Any]) -> None:
    """Forward returned an unwritten buffer; the answer went into the kept copy of the one
    call the judge then checked. The old judge: correct, 13.04x eager per call."""
    verdict = judge("fix_up_kept_copy", profile=True, **place)
    assert verdict.status is Status.VIOLATION and verdict.reward == -1
    assert any(v.startswith("output changed after its call returned") for v in
               verdict.violations), verdict.violations


@pytest.mark.parametrize("place", PLACES)
def test_work_hidden_in_the_draw_of_the_inputs_is_on_the_judges_clock(
        place: dict[str, Any]) -> None:
    """A sixty-pass kernel run while the judge drew the inputs. The old judge: correct,
    17.00x eager per call (its honest twin: 0.30x for one pass)."""
    verdict = judge("hooked_draw", profile=True, **place)
    assert verdict.reward <= 1, "the draw's work bought no speed milestone"
    credited = any("the judge's clock is credited" in w for w in verdict.warnings)
    refused = any(v.startswith("timing cross-check failed") for v in verdict.violations)
    if not (credited or refused or verdict.noisy):  # then its calls were timed slow as they are
        assert verdict.speedup_vs_eager is None or verdict.speedup_vs_eager < 1, verdict


@pytest.mark.parametrize("place", PLACES)
def test_a_clock_forged_by_thirty_percent_is_replaced_by_the_judges_own(
        place: dict[str, Any]) -> None:
    """Each reply said 70% of the call's time: inside the old cross-check's tolerance, so
    the old judge credited 1/0.7 of the honest twin's speedup (its back-to-back figure took
    the candidate's clocks until 2026-12-04)."""
    verdict = judge("forged_clock", profile=True, **place)
    notes = [w for w in verdict.warnings if "the judge's clock is credited" in w]
    if verdict.noisy and not notes:  # a loaded machine: no speed reward to gain either
        assert verdict.reward <= 1
        return
    assert notes, verdict.warnings
    # Fully taken back, the forgery is 1/0.7 = 1.43x; the judge keeps back its allowance
    # (the baselines' own spread), which a loaded 2-core machine widens: 1.14-1.18x there
    # (2026-12-04). A judge that took back less than a quarter of it fails here.
    judged, own = map(float, re.findall(r"([\d.]+) ms", notes[0]))
    assert judged / own > 1.1, notes[0]
    warm = [w for w in verdict.warnings if "the judge's figure is credited" in w]
    assert warm, verdict.warnings  # the back-to-back figure too
    judged, own = map(float, re.findall(r"([\d.]+) ms", warm[0]))
    assert judged / own > 1.1, warm[0]


@pytest.mark.parametrize("place", PLACES)
def test_device_memory_figures_of_the_wrong_shape_are_left_out(place: dict[str, Any]) -> None:
    """They decide nothing: the honest kernel is judged as its twin would be, and the
    verdict's memory figure is the judge's own processes' alone."""
    verdict = judge("garbled_memory", profile=True, **place)
    assert verdict.status is Status.OK and verdict.correct, verdict.error
    if place.get("device") == "cuda":
        assert verdict.device_memory_gib is not None and verdict.device_memory_gib > 0
    else:
        assert verdict.device_memory_gib is None
