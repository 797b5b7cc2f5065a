"""The reward a verdict earns: CUDA Agent's milestones, read from the verdict alone.

Kept apart from the verdict's fields so the policy (what counts as faster, which protocols
must agree) is one short file; the verdict only records what the judge measured.
"""

from __future__ import annotations

from cudaopt.judge.verdict.verdict import Verdict


def milestone_reward(verdict: Verdict, margin: float, isolation_required: bool = False) -> float:
    """CUDA Agent's milestone reward: -1 broken, 1 correct, 2 beats eager, 3 beats both.

    Uses the lower-quartile speedups so that a gain inside the measured noise earns nothing.
    "Beats" holds under both protocols, per call (cold) and back to back (warm); a `noisy`
    verdict earns no speed milestone at all, nor does one whose candidate ran beside the
    judge's other processes when `isolation_required` (it could have slowed them), nor one
    whose timed calls launched no kernel of the candidate's own (`kernels_ran` empty).
    """
    if not verdict.clean:
        return -1.0
    floor = 1.0 + margin
    beats_eager = (verdict.speedup_vs_eager_low or 0.0) > floor and warm_beats(
        verdict, "eager", floor)
    beats_compile = (verdict.speedup_vs_compile_low or 0.0) > floor and warm_beats(
        verdict, "compile", floor)
    if verdict.noisy or (isolation_required and not verdict.isolated):
        return 1.0  # a speed milestone needs measurements that hold still, and no reach
    if verdict.kernels_ran == []:
        return 1.0  # nothing of its own ran: whatever was fast, it was not its kernels
    if beats_eager and beats_compile:
        return 3.0
    return 2.0 if beats_eager else 1.0


def warm_beats(verdict: Verdict, name: str, floor: float) -> bool:
    """The warm back-to-back figure must agree with the cold one: a kernel that wins single
    calls but loses when calls follow each other (as inside a model) is not faster. Where
    no warm figure could be measured (`warm["skipped"]` says why), the cold one decides."""
    warm = verdict.warm or {}
    if warm.get("skipped") or not warm:
        return True
    return (warm.get(f"speedup_vs_{name}_low") or 0.0) > floor
