"""Random compositions: how many operators (weighted toward two, as CUDA-Agent-Ops-6K),
which ones (a family first, then an operator of it, so the 60 elementwise functions do not
crowd out the six convolutions), and the sizes they start from."""

from __future__ import annotations

import random
from typing import Any

from cudaopt.synth.shapes import Composition, Step, trace

TRIES_PER_STEP = 30
_FEATURES = [32, 64, 128, 256, 512, 1024]
_CHANNELS = [3, 8, 16, 32, 64]
_SPATIAL = {3: [32, 64, 128, 256, 512], 4: [16, 32, 64], 5: [8, 16, 24]}
_OUT = [8, 16, 32, 64, 128, 256]


def rng_for(seed: int, attempt: int) -> random.Random:
    """One generator per attempt: a continued run draws what a longer first run would."""
    return random.Random(f"cudaopt-synth:{seed}:{attempt}")


def ops_count(rng: random.Random, max_ops: int, weights: dict[str, float]) -> int:
    counts = list(range(1, max_ops + 1))
    return rng.choices(counts, [weights.get(str(k), weights["5"]) for k in counts])[0]


def by_family(catalog: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    families: dict[str, list[dict[str, Any]]] = {}
    for op in catalog:
        families.setdefault(op["family"], []).append(op)
    return dict(sorted(families.items()))


def sample(catalog: list[dict[str, Any]], rng: random.Random, max_ops: int,
           weights: dict[str, float]) -> Composition | None:
    """A composition that type-checks on meta tensors, or None when no operator fits."""
    ops, families = {op["id"]: op for op in catalog}, by_family(catalog)
    wanted = ops_count(rng, max_ops, weights)
    first = _pick(families, rng, lambda op: max(op["ranks"]) >= 2)
    rank = rng.choice([r for r in first["ranks"] if r >= 2])
    comp = Composition([_step(first, rank, rng)], _start_shape(first, rank, rng))
    try:
        out = trace(comp, ops, 2).layers[-1].out
    except Exception:  # noqa: BLE001 - sizes this operator refuses: try another attempt
        return None
    while len(comp.steps) < wanted:
        for _ in range(TRIES_PER_STEP):
            op = _pick(families, rng, lambda o, r=len(out): r in o["ranks"])
            trial = Composition([*comp.steps, _step(op, len(out), rng)], comp.shape)
            try:
                out = trace(trial, ops, 2).layers[-1].out
            except Exception:  # noqa: BLE001 - does not type-check: draw another
                continue
            comp = trial
            break
        else:
            return None
    return comp


def _pick(families: dict[str, list[dict[str, Any]]], rng: random.Random,
          fits: Any) -> dict[str, Any]:
    open_ = {name: [op for op in ops if fits(op)] for name, ops in families.items()}
    open_ = {name: ops for name, ops in open_.items() if ops}
    return rng.choice(open_[rng.choice(sorted(open_))])


def _step(op: dict[str, Any], rank: int, rng: random.Random) -> Step:
    args = {"out": rng.choice(_OUT), "groups": rng.choice([2, 4, 8]),
            "cols": rng.choice(_FEATURES[:5])}
    if op["form"] == "dim":
        args["dim"] = rng.randint(1, rank - 1)
    return Step(op["id"], {k: v for k, v in args.items() if _uses(op, k)})


def _uses(op: dict[str, Any], arg: str) -> bool:
    if op["form"] == "module":
        return arg in {"out": "out", "groups": "groups"} and arg in op["init"].values()
    return (arg == "dim" and op["form"] == "dim") or (arg == "cols" and op["form"] == "matrix")


def _start_shape(op: dict[str, Any], rank: int, rng: random.Random) -> list[int]:
    if rank == 2:
        return [1, rng.choice(_FEATURES)]
    spatial = _SPATIAL.get(rank, [8, 16])
    return [1, rng.choice(_CHANNELS)] + [rng.choice(spatial) for _ in range(rank - 2)]
