"""When are the judge's own measurements too unreliable to award a speed milestone?

Interleaved rounds cancel load that hits every contestant alike, not load that hits them
unequally: on a busy machine torch's intra-op threads stall behind other processes while a
single-threaded kernel barely notices, and the baselines can slow down many times over in
one run and not in the next. That shows in the measurements themselves:

- the per-round speedup ratios scatter more than the margin a milestone needs;
- a baseline's per-round times drift by more than the margin across the run;
- single calls of one contestant scatter far more than the margin (a quiet machine times
  the same call to within a few percent).

Load that biases instead of scattering shows in none of these; the scheduler shows it
(`contention`), and the timing phase adds its findings to these.

`reasons` names each finding, unless the speedups lie so far from the milestone line that
the noise could not move them across it; the judge re-measures once when there is any
(unless the rounds already put the speedup over eager below the line: `out_of_reach`), and
a verdict whose re-measurement is unreliable too is marked `noisy` and earns no speed
reward.
"""

from __future__ import annotations

import math
import statistics

Samples = dict[str, list[float]]
CALL_SPREAD_FACTOR = 3.0  # single calls may scatter this many margins before it counts
CONFIDENCE = 0.95  # that a speedup's lower quartile is below the line, before rounds stop


def _half_iqr(values: list[float]) -> float:
    """Half the interquartile range, relative to the median."""
    if len(values) < 2:
        return 0.0
    q1, mid, q3 = statistics.quantiles(sorted(values), n=4)
    return (q3 - q1) / 2 / mid if mid > 0 else 0.0


def reasons(rounds: list[Samples], names: list[str], margin: float) -> list[str]:
    """What makes these rounds too unreliable to decide the reward; empty when they are
    fine, or when the noise, however large, cannot change the decision (a kernel 30x faster
    scattering ±10% is faster all the same)."""
    found, spread = [], 0.0
    for name in names:
        ratio = _half_iqr(round_ratios(rounds, name))
        drift = _half_iqr([statistics.median(r[name]) for r in rounds])
        spread = max(spread, ratio, drift)
        if ratio > margin:
            found.append(f"speedup vs {name} scatters ±{ratio:.0%} across rounds "
                         f"(more than the {margin:.0%} margin)")
        if drift > margin:
            found.append(f"{name} drifts ±{drift:.0%} across rounds")
    for name in [*names, "candidate"]:
        calls = _half_iqr([x for r in rounds for x in r[name]])
        spread = max(spread, calls)
        if calls > CALL_SPREAD_FACTOR * margin:
            found.append(f"single {name} calls scatter ±{calls:.0%}")
    if found and all(_decisive(round_ratios(rounds, n), margin, spread) for n in names):
        return []
    return found


def round_ratios(rounds: list[Samples], name: str) -> list[float]:
    """Each round's speedup of the candidate over `name`: the ratio of their medians."""
    return [statistics.median(r[name]) / statistics.median(r["candidate"]) for r in rounds]


def _decisive(ratios: list[float], margin: float, spread: float) -> bool:
    """Whether the speedup lies so far from the 1 + margin line, on either side, that twice
    the worst relative scatter seen could not carry it across."""
    if len(ratios) < 2:
        return False
    q1, _, q3 = statistics.quantiles(sorted(ratios), n=4)
    line, widen = 1 + margin, 1 + 2 * spread
    return q1 > line * widen or q3 < line / widen


def score(rounds: list[Samples], names: list[str]) -> float:
    """How noisy, to pick the better of two measurements: the worst relative spread."""
    worst = 0.0
    for name in names:
        worst = max(worst, _half_iqr(round_ratios(rounds, name)),
                    _half_iqr([x for r in rounds for x in r[name]]))
    return max(worst, _half_iqr([x for r in rounds for x in r["candidate"]]))


def ratio_spread(rounds: list[Samples], names: list[str]) -> float:
    """The worst half interquartile range of the per-round speedups, relative to their
    median: more rounds stop being worth their time once it is small."""
    return max(_half_iqr(round_ratios(rounds, name)) for name in names)


def settled(rounds: list[Samples], names: list[str], margin: float) -> bool:
    """Whether more rounds could change the reward, which reads each speedup's lower
    quartile against the 1 + margin line: settled for a contestant when the rounds' lower
    quartile is above the line, or when they show, whatever the distribution, that the true
    lower quartile lies below it (see `_below`). A speedup near 1 that scatters more than
    the margin (a call of a few microseconds, where the host's jitter is most of what the
    device sees) never narrows to the target spread, and before this rule it took every
    round the time budget allows, twice, to reach the answer five rounds already gave."""
    line = 1 + margin
    for name in names:
        ratios = sorted(round_ratios(rounds, name))
        if statistics.quantiles(ratios, n=4)[0] > line or _below(ratios, line):
            continue
        return False
    return True


def out_of_reach(rounds: list[Samples], margin: float) -> bool:
    """Whether the rounds show, with `CONFIDENCE`, that the speedup over eager, which every
    speed milestone needs, has its lower quartile below the 1 + margin line: then the reward
    is 1 whatever another measurement gives, and noise is no reason to spend one. Most
    candidates of a reinforcement-learning run are slower than eager, and their noisy
    verdicts took a second measurement each (six of 16 in the reward service's suite on an
    H100 on 2026-12-06, 10.2 s of its 17.1 s of timing)."""
    return _below(sorted(round_ratios(rounds, "eager")), 1 + margin)


def _below(ratios: list[float], line: float) -> bool:
    """Whether, with `CONFIDENCE`, the lower quartile of the distribution the sorted
    `ratios` were drawn from lies below `line`: that quartile is below the k-th smallest of
    n draws unless k or more of them fell under it, which happens with probability
    P(Binomial(n, 1/4) >= k); k is the smallest rank that makes that at most 1 - CONFIDENCE."""
    n = len(ratios)
    tail = 0.0  # P(Binomial(n, 1/4) >= k), for k from n down
    for k in range(n, 0, -1):
        tail += math.comb(n, k) * 0.25 ** k * 0.75 ** (n - k)
        if tail > 1 - CONFIDENCE:
            return k < n and ratios[k] < line  # rank k + 1, the smallest rank still within
    return False
