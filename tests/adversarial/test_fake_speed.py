"""Hacks that fake speed: skipping work on timed calls, doing it outside the timed region,
or fooling the clock. Each first goes through the naive harness (naive.py), which checks
correctness on its first calls and then times in the process that imported the candidate;
the judge must reject each, with reward -1 and a reason naming the rule."""

from __future__ import annotations

from cudaopt.judge import Status
from cudaopt.judge.checks.streams import STALE

from .harness import fools_naive, judge, warm_pool

TIMED_WRONG = "output of a timed call is wrong (the candidate behaves differently when timed)"


def test_cache_by_shape_after_the_first_calls_fails_the_timed_checks_as_a_stale_output(
        ) -> None:
    """Beats a harness that checks correctness first and never checks timed calls; the
    timed check's refusal names what it did: it returned an earlier call's output."""
    assert fools_naive("cache_by_shape")
    verdict = judge("cache_by_shape", profile=True)
    assert verdict.status is Status.VIOLATION and verdict.reward == -1
    assert any(v.startswith(STALE) and "a timed call's output was wrong" in v
               for v in verdict.violations), verdict.violations


def test_native_background_thread_fails_the_timed_checks() -> None:
    """Beats a harness that checks early calls and times later ones: the timed calls return
    at once and a C++ thread, invisible to Python, does the work."""
    assert fools_naive("background_native_thread")
    verdict = judge("background_native_thread", profile=True)
    assert verdict.status is Status.VIOLATION and verdict.reward == -1
    assert any(v.startswith(TIMED_WRONG) for v in verdict.violations), verdict.violations


def test_python_background_thread_is_reported() -> None:
    """Beats the same harness with a thread pool doing the work after forward returns."""
    assert fools_naive("background_thread_pool")
    verdict = judge("background_thread_pool", profile=True)
    assert verdict.status is Status.VIOLATION and verdict.reward == -1
    assert any(v.startswith("background thread still running after forward returned: "
                            "ThreadPoolExecutor") for v in verdict.violations), verdict.violations


def test_work_in_a_hook_after_the_clock_fails_the_parents_clock() -> None:
    """Beats any in-process timer, patched or not: the work runs in an interpreter hook
    after the clock is read, replacing no function a tamper check could look at. The
    parent's clock charges it to the candidate, and refuses it where it stands far above
    the noise of the protocol around each call."""
    assert fools_naive("hook_after_clock")
    verdict = judge("hook_after_clock", profile=True)
    assert verdict.status is Status.VIOLATION and verdict.reward == -1
    refused = any(v.startswith("timing cross-check failed: by the judge's own clock")
                  for v in verdict.violations)
    charged = any("the judge's clock is credited" in w for w in verdict.warnings)
    assert refused or charged or verdict.noisy, (verdict.violations, verdict.warnings)
    assert any("interpreter hook was installed (sys.setprofile)" in v
               for v in verdict.violations), "the in-process second line"


def test_patched_clocks_are_reported() -> None:
    """Beats a harness that times eager and candidate with `time.perf_counter` or CUDA
    events in the process that imported the candidate."""
    assert fools_naive("patch_timer")
    verdict = judge("patch_timer")
    assert verdict.status is Status.VIOLATION and verdict.reward == -1
    assert ("tampering: time.perf_counter was replaced after the candidate was imported"
            in verdict.violations)
    assert ("tampering: torch.cuda.Event.elapsed_time was replaced after the candidate was "
            "imported" in verdict.violations)


def test_processes_that_spin_beside_the_baselines_earn_no_speed_reward() -> None:
    """Beats a harness, and a judge, that reads load only outside the process tree it
    started: the candidate's own processes slow the baselines' calls, not its own. The
    judge reads their CPU time while it times (workers/beside.py): not proof of a forgery,
    so the timing is untrusted rather than refused."""
    assert fools_naive("load_beside_baselines")
    verdict = judge("load_beside_baselines", profile=True)
    assert verdict.status is Status.OK and verdict.noisy and verdict.reward <= 1, verdict
    assert any("processes the candidate started used" in w for w in verdict.warnings), (
        verdict.warnings)


def test_on_a_cpu_the_candidate_is_stopped_while_the_baselines_are_timed() -> None:
    """Then nothing of the candidate's, a busy thread or a process it forked, takes the
    baselines' cores while they are timed: a probe counts its process's continuations."""
    verdict = judge("continued_count", profile=True)
    assert verdict.status is Status.OK and not verdict.violations, verdict
    counts = [int(line.split()[1]) for log in warm_pool("cpu").scratch.glob("candidate-*.log")
              for line in log.read_text(errors="replace").splitlines()
              if line.startswith("continued ")]
    # once for each round of baseline calls, timed or back to back, each phase's warm-up
    # round included, all but the last before its last call
    rounds = verdict.timing_rounds + (verdict.warm or {}).get("rounds", 0)
    assert counts and max(counts) >= rounds + 1, (counts, rounds)
