"""The live view while a bench runs: one line per finished task above a progress bar with
the count, elapsed time and ETA (plain lines only when the output is not a terminal)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


def task_line(line: dict[str, Any]) -> str:
    """`✓ level1/19_ReLU  ok  1.87x compile  3.12x eager  r=3  cuda:0 12.3 s`."""
    if line.get("infra_status") != "ok":
        mark, what = "[yellow]![/]", f"[yellow]machine failed[/]: {_first(line['infra_error'])}"
    elif line.get("correct"):
        mark, what = "[green]✓[/]", (f"{_x(line.get('speedup_vs_compile'))} compile  "
                                      f"{_x(line.get('speedup_vs_eager'))} eager  "
                                      f"r={line.get('reward'):g}")
    else:
        mark, what = "[red]✗[/]", f"{line.get('status')}  {_first(line.get('error') or '')}"
    where = f"{line.get('slot') or '-'} {line.get('wall_s') or 0:.1f} s"
    return f"{mark} {escape(line['task'])}  {what}  [dim]{escape(where)}[/]"


def _x(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _first(text: str, limit: int = 60) -> str:
    """The line that says what went wrong: the first naming an error, else the first."""
    rows = [row.strip() for row in text.strip().splitlines() if row.strip()] or [""]
    first = next((row for row in rows if "error" in row.lower()), rows[0])
    return escape(first[:limit] + ("…" if len(first) > limit else ""))


class BenchView:
    """Context manager; `on_line` is the runner's callback."""

    def __init__(self, console: Console, total: int, label: str) -> None:
        self.console = console
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TimeElapsedColumn(),
                                 TextColumn("ETA"), TimeRemainingColumn(), console=console)
        self.bar = self.progress.add_task(label, total=total)

    def __enter__(self) -> BenchView:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def on_line(self, line: dict[str, Any]) -> None:
        self.progress.console.print(task_line(line), highlight=False)
        self.progress.advance(self.bar)
