"""The bench's table, in the terminal (two tables that fit 80 columns) and as
summary.json / summary.csv / summary.md (one wide table that reads well on a pull request)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console, Group
from rich.table import Table

Fmt = Callable[[Any], str]


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def _x(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _hours(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _wall(value: float | None) -> str:
    if value is None:
        return "-"
    minutes, seconds = divmod(int(value), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{seconds:02d}"


#: (summary key, header, format); the terminal shows them as two tables, split here.
CORRECTNESS: list[tuple[str, str, Fmt]] = [
    ("tasks", "tasks", str), ("infra_failed", "infra\nfailed", str),
    ("compiled", "built", str), ("correct_share", "correct", _pct),
    ("faster_than_eager_share", "faster\neager", _pct),
    ("faster_than_compile_share", "faster\ncompile", _pct), ("fast_1", "fast\np=1", _pct),
    ("fast_1.5", "fast\np=1.5", _pct), ("fast_2", "fast\np=2", _pct),
]
SPEED: list[tuple[str, str, Fmt]] = [
    ("geomean_vs_eager", "eager\ngm all", _x), ("geomean_vs_compile", "compile\ngm all", _x),
    ("geomean_vs_eager_correct", "eager\ngm ok", _x),
    ("geomean_vs_compile_correct", "compile\ngm ok", _x), ("mean_reward", "mean\nreward", _num),
    ("cost_usd", "cost\nUSD", _num), ("gpu_hours", "GPU\nhours", _hours),
    ("wall_s", "wall\ntime", _wall),
]


def flat(header: str) -> str:
    return header.replace("\n", " ")


def _rows(summary: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [*summary["levels"].items(), ("overall", summary["overall"])]


def _table(summary: dict[str, Any], columns: list[tuple[str, str, Fmt]], title: str) -> Table:
    table = Table(title=title, box=box.SIMPLE_HEAD, padding=(0, 1), collapse_padding=True,
                  pad_edge=False, title_justify="left")
    table.add_column("level", no_wrap=True, min_width=7)
    for _, header, _ in columns:
        table.add_column(header, justify="right", no_wrap=True)
    for name, figures in _rows(summary):
        style = "bold" if name == "overall" else None
        table.add_row(name, *(fmt(figures.get(key)) for key, _, fmt in columns), style=style)
    return table


def terminal(summary: dict[str, Any]) -> Group:
    """shares are of all scored tasks; "gm … ok" are geometric means over correct tasks."""
    return Group(_table(summary, CORRECTNESS, "correctness (share of all tasks)"),
                 _table(summary, SPEED, "speedups (geometric means) and cost"))


def markdown(summary: dict[str, Any], title: str) -> str:
    columns = CORRECTNESS + SPEED
    head = "| level | " + " | ".join(flat(h) for _, h, _ in columns) + " |"
    rule = "| --- | " + " | ".join("---:" for _ in columns) + " |"
    rows = [f"| {'**overall**' if name == 'overall' else name} | "
            + " | ".join(fmt(figures.get(key)) for key, _, fmt in columns) + " |"
            for name, figures in _rows(summary)]
    notes = (f"GPU: {', '.join(summary['devices']) or '-'}; torch "
             f"{', '.join(summary['torch_versions']) or '-'}. Shares are of all scored tasks "
             "(a machine failure, `infra`, is not scored); faster = > 5% on the lower-quartile "
             "speedup; fast_p = correct and > p x eager; \"gm\" = geometric mean over all "
             "tasks (not correct = 1.0x), \"gm ... ok\" over correct tasks.")
    return "\n".join([f"## {title}", "", head, rule, *rows, "", notes, ""])


def csv_text(summary: dict[str, Any]) -> str:
    keys = list(summary["overall"])
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["level", *keys])
    for name, figures in _rows(summary):
        writer.writerow([name, *(figures.get(k) for k in keys)])
    return buffer.getvalue()


def write_summary(bench: Path, summary: dict[str, Any], title: str) -> list[Path]:
    """summary.json, .csv, .md; and summary.png when the `plot` extra is installed."""
    paths = [bench / "summary.json", bench / "summary.csv", bench / "summary.md"]
    paths[0].write_text(json.dumps(summary, indent=2) + "\n")
    paths[1].write_text(csv_text(summary))
    paths[2].write_text(markdown(summary, title))
    return paths


def print_summary(console: Console, summary: dict[str, Any]) -> None:
    console.print(terminal(summary))
