"""The end-of-run table (80 columns): what was kept, what each filter rejected, how many
operators the kept tasks compose, and the time it took."""

from __future__ import annotations

from rich.table import Table

from cudaopt.synth.evaluate import FILTERS
from cudaopt.synth.runner import Summary


def summary_table(summary: Summary) -> Table:
    table = Table(title=f"cudaopt synth: {summary.out}", width=80, title_justify="left")
    table.add_column("", no_wrap=True)
    table.add_column("tries", justify="right")
    table.add_column("share", justify="right")
    tried = summary.tried or 1
    table.add_row("kept", str(summary.kept_now), f"{summary.kept_now / tried:.0%}")
    for name in FILTERS:
        count = summary.statuses.get(name, 0)
        if count:
            table.add_row(f"rejected: {name}", str(count), f"{count / tried:.0%}")
    table.add_row("tried", str(summary.tried), "", end_section=True)
    for ops in sorted(summary.ops_counts):
        count = summary.ops_counts[ops]
        table.add_row(f"kept with {ops} operator{'s' * (ops > 1)}", str(count),
                      f"{count / max(summary.kept_now, 1):.0%}")
    table.caption = (f"{summary.kept_before + summary.kept_now} of {summary.wanted} tasks in "
                     f"the folder; {summary.seconds:.0f} s, {summary.kept_per_minute:.2f} "
                     "kept per minute")
    table.caption_justify = "left"
    return table
