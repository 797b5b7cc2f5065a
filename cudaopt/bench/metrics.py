"""The table's figures, per level and overall, from results lines alone.

Conventions (KernelBench and CUDA Agent): every share is of *all* scored tasks; a task the
machine failed (`infra_status` not "ok") is not scored, only counted (`infra_failed`).
"Faster" means faster by more than 5% on the judge's conservative lower-quartile speedup.
`fast_p` is KernelBench's: correct and speedup over eager above p (`fast_p_compile`: over
torch.compile). Geometric means over all tasks count a task that is not correct as 1.0x;
over correct tasks they use only those. GPU-hours are slot time (one task holds one slot).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

FAST_P = (0.0, 1.0, 1.5, 2.0)


def _speedup(line: dict[str, Any], against: str) -> float | None:
    value = line.get(f"speedup_vs_{against}")
    return value if line.get("correct") and value is not None and value > 0 else None


def _geomean(values: Iterable[float]) -> float | None:
    values = list(values)
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _share(count: int, total: int) -> float | None:
    return count / total if total else None


def summarize_group(lines: list[dict[str, Any]]) -> dict[str, Any]:
    scored = [line for line in lines if line.get("infra_status") == "ok"]
    n = len(scored)
    correct = [line for line in scored if line.get("correct")]
    out: dict[str, Any] = {
        "tasks": n,
        "infra_failed": len(lines) - n,
        "compiled": sum(bool(line.get("compiled")) for line in scored),
        "correct": len(correct),
        "correct_share": _share(len(correct), n),
    }
    for against, milestone in (("eager", 2.0), ("compile", 3.0)):
        # The judge's own decision: beyond the margin on both protocols, not noisy.
        faster = sum((line.get("reward") or -1.0) >= milestone for line in scored)
        out[f"faster_than_{against}"] = faster
        out[f"faster_than_{against}_share"] = _share(faster, n)
    for p in FAST_P:
        out[f"fast_{p:g}"] = _share(sum((_speedup(x, "eager") or 0) > p for x in scored), n)
        out[f"fast_{p:g}_compile"] = _share(
            sum((_speedup(x, "compile") or 0) > p for x in scored), n)
    for against in ("eager", "compile"):
        out[f"geomean_vs_{against}"] = _geomean(_speedup(x, against) or 1.0 for x in scored)
        out[f"geomean_vs_{against}_correct"] = _geomean(
            s for x in correct if (s := _speedup(x, against)) is not None)
    rewards = [line["reward"] for line in scored if line.get("reward") is not None]
    out["mean_reward"] = sum(rewards) / len(rewards) if rewards else None
    out["cost_usd"] = sum(line.get("cost_usd") or 0.0 for line in lines)
    slot_s = sum(line.get("wall_s") or 0.0 for line in lines)
    out["gpu_hours"] = slot_s / 3600
    out["wall_s"] = slot_s
    return out


def natural(name: str) -> list[object]:
    """Sort key: "level2" before "level10"."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def summarize(lines: list[dict[str, Any]], elapsed_s: float | None = None) -> dict[str, Any]:
    """`{"levels": {level: figures}, "overall": figures, ...}`; a level's `wall_s` is its
    tasks' summed time, the overall `wall_s` the bench's elapsed time when given."""
    levels: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        levels.setdefault(line.get("level") or "-", []).append(line)
    overall = summarize_group(lines)
    if elapsed_s is not None:
        overall["wall_s"] = elapsed_s
    return {
        "levels": {name: summarize_group(group) for name, group in
                   sorted(levels.items(), key=lambda item: natural(item[0]))},
        "overall": overall,
        "devices": sorted({x["device_name"] for x in lines if x.get("device_name")}),
        "torch_versions": sorted({x["torch_version"] for x in lines if x.get("torch_version")}),
    }
