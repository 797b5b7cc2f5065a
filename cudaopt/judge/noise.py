"""When are the judge's own measurements too unreliable to award a speed milestone?

Interleaved rounds cancel load that hits every contestant alike, not load that hits them
unequally: on a busy machine torch's intra-op threads stall behind other processes while a
single-threaded kernel barely notices, and the baselines can slow down many times over in
one run and not in the next. That shows in the measurements themselves:

- the per-round speedup ratios scatter more than the margin a milestone needs;
- a baseline's per-round times drift by more than the margin across the run;
- single calls of one contestant scatter far more than the margin (a quiet machine times
  the same call to within a few percent).

`reasons` names each finding; the judge re-measures once when there is any, and a verdict
whose re-measurement is unreliable too is marked `noisy` and earns no speed reward.
"""

from __future__ import annotations

import statistics

Samples = dict[str, list[float]]
CALL_SPREAD_FACTOR = 3.0  # single calls may scatter this many margins before it counts


def _half_iqr(values: list[float]) -> float:
    """Half the interquartile range, relative to the median."""
    if len(values) < 2:
        return 0.0
    q1, mid, q3 = statistics.quantiles(sorted(values), n=4)
    return (q3 - q1) / 2 / mid if mid > 0 else 0.0


def reasons(rounds: list[Samples], names: list[str], margin: float) -> list[str]:
    """What makes these rounds unreliable; empty when they are fine."""
    found = []
    for name in names:
        ratios = [statistics.median(r[name]) / statistics.median(r["candidate"]) for r in rounds]
        spread = _half_iqr(ratios)
        if spread > margin:
            found.append(f"speedup vs {name} scatters ±{spread:.0%} across rounds "
                         f"(more than the {margin:.0%} margin)")
        drift = _half_iqr([statistics.median(r[name]) for r in rounds])
        if drift > margin:
            found.append(f"{name} drifts ±{drift:.0%} across rounds")
    for name in [*names, "candidate"]:
        calls = _half_iqr([x for r in rounds for x in r[name]])
        if calls > CALL_SPREAD_FACTOR * margin:
            found.append(f"single {name} calls scatter ±{calls:.0%}")
    return found


def score(rounds: list[Samples], names: list[str]) -> float:
    """How noisy, to pick the better of two measurements: the worst relative spread."""
    worst = 0.0
    for name in names:
        worst = max(worst, _half_iqr([statistics.median(r[name]) / statistics.median(
            r["candidate"]) for r in rounds]), _half_iqr([x for r in rounds for x in r[name]]))
    return max(worst, _half_iqr([x for r in rounds for x in r["candidate"]]))
