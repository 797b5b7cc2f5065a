"""`bench compare A B`: what changed from bench A to bench B, task by task (newly passing,
newly failing, the biggest speedup changes) and figure by figure, with a warning when the
two ran on different GPUs or torch versions (their timings are then not comparable)."""

from __future__ import annotations

import math
from typing import Any

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text

from cudaopt.bench.metrics import summarize
from cudaopt.bench.render import CORRECTNESS, SPEED, flat

Lines = dict[str, dict[str, Any]]


def _ok(line: dict[str, Any] | None) -> bool:
    return bool(line and line.get("infra_status") == "ok" and line.get("correct"))


def compare(a: Lines, b: Lines, top: int = 10) -> dict[str, Any]:
    """`a` and `b` map task id to its line (`results.latest`)."""
    both = sorted(set(a) & set(b))
    changes = []
    for task in both:
        old, new = a[task].get("speedup_vs_compile"), b[task].get("speedup_vs_compile")
        if _ok(a[task]) and _ok(b[task]) and old and new:
            changes.append({"task": task, "a": old, "b": new, "ratio": new / old})
    changes.sort(key=lambda c: -abs(math.log(c["ratio"])))
    sa, sb = summarize(list(a.values())), summarize(list(b.values()))
    warnings = []
    for key, what in (("devices", "GPUs"), ("torch_versions", "torch versions")):
        if sa[key] != sb[key]:
            warnings.append(f"the benches ran on different {what}: {', '.join(sa[key]) or '-'}"
                            f" vs {', '.join(sb[key]) or '-'}; their timings do not compare")
    only = sorted(set(a) ^ set(b))
    if only:
        warnings.append(f"{len(only)} task(s) are in one bench only (e.g. {only[0]}); the "
                        "per-task lists cover the tasks in both")
    return {
        "newly_passing": [t for t in both if _ok(b[t]) and not _ok(a[t])],
        "newly_failing": [t for t in both if _ok(a[t]) and not _ok(b[t])],
        "speedup_changes": changes[:top],
        "metrics": _deltas(sa, sb),
        "warnings": warnings,
    }


def _deltas(sa: dict[str, Any], sb: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out = {}
    rows = {**{k: v for k, v in sa["levels"].items()}, "overall": sa["overall"]}
    other = {**sb["levels"], "overall": sb["overall"]}
    for level in [*sorted(set(rows) | set(other) - {"overall"}), "overall"]:
        fa, fb = rows.get(level, {}), other.get(level, {})
        out[level] = {key: {"a": fa.get(key), "b": fb.get(key), "delta": _minus(fb.get(key),
                                                                                fa.get(key))}
                      for key, _, _ in CORRECTNESS + SPEED}
    return out


def _minus(b: Any, a: Any) -> float | None:
    return b - a if isinstance(a, (int, float)) and isinstance(b, (int, float)) else None


def render(result: dict[str, Any]) -> Group:
    parts: list[Any] = [Text(f"warning: {w}", style="yellow") for w in result["warnings"]]
    overall = result["metrics"]["overall"]
    table = Table(title="overall: A -> B", box=box.SIMPLE_HEAD, title_justify="left")
    for header in ("figure", "A", "B", "change"):
        table.add_column(header, justify="left" if header == "figure" else "right")
    for key, header, fmt in CORRECTNESS + SPEED:
        cell = overall[key]
        delta = cell["delta"]
        shown = "-" if delta is None else (f"{delta * 100:+.1f} pt" if fmt.__name__ == "_pct"
                                           else f"{delta:+.3g}")
        table.add_row(flat(header), fmt(cell["a"]), fmt(cell["b"]), shown)
    parts.append(table)
    for key, label in (("newly_passing", "newly passing"), ("newly_failing", "newly failing")):
        names = result[key]
        parts.append(Text(f"{label} ({len(names)}): " + (", ".join(names[:20]) or "-")
                          + (" ..." if len(names) > 20 else "")))
    if result["speedup_changes"]:
        moves = Table(title="biggest speedup changes (vs torch.compile, correct in both)",
                      box=box.SIMPLE_HEAD, title_justify="left")
        for header in ("task", "A", "B", "B/A"):
            moves.add_column(header, justify="left" if header == "task" else "right")
        for c in result["speedup_changes"]:
            moves.add_row(c["task"], f"{c['a']:.2f}x", f"{c['b']:.2f}x", f"{c['ratio']:.2f}")
        parts.append(moves)
    return Group(*parts)
