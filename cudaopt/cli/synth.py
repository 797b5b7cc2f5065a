"""`cudaopt synth`: KernelBench-format tasks composed from the installed torch's operators
and kept only when they pass CUDA Agent's filters (see cudaopt/synth/).

Exit codes: 0 done, 1 the try limit was reached short of N, 2 bad input.
"""

from __future__ import annotations

import time
from pathlib import Path

import typer
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

from cudaopt.cli.common import setting_opt
from cudaopt.cli.style import fail
from cudaopt.task import BadInput


def register(app: typer.Typer) -> None:
    """Add `synth` to the `cudaopt` app."""
    app.command("synth")(synth_cmd)


def synth_cmd(
    n: int = typer.Option(..., "--n", metavar="N", min=1, show_default=False,
                          help="tasks the folder should hold (a second run continues)"),
    out: Path = typer.Option(..., "--out", metavar="DIR", show_default=False,
                             help="folder for the task files and manifest.jsonl"),
    seed: int = typer.Option(0, "--seed", metavar="S", help="same seed and torch "
                             "version, same tasks"),
    max_ops: int = typer.Option(5, "--max-ops", metavar="K", min=1, max=5,
                                help="most operators one task composes"),
    against: list[Path] = setting_opt("--against", "SUITE", "drop tasks whose AST similarity "
                                      "to a task of SUITE exceeds 0.9 (repeatable)"),
    device: str = setting_opt("--device", "DEVICE", "cuda or cpu",
                              "cuda when present, else cpu"),
    eager_ms: str = setting_opt("--eager-ms", "LO,HI", "window of eager time per call",
                                "1,100 on cuda, 1,20 on cpu"),
    model: str = setting_opt("--model", "MODEL", "compose with a litellm model instead of "
                             "at random"),
    api_base: str = setting_opt("--api-base", "URL", "OpenAI-compatible endpoint of --model"),
    timeout: float = typer.Option(300.0, "--timeout", metavar="SECONDS",
                                  help="time limit of one candidate's filters"),
) -> None:
    """Write N KernelBench-format tasks into DIR.

    Each a composition of 1 to K operators of the installed torch that runs eagerly and
    under torch.compile, agrees, is deterministic, follows its input and takes LO-HI ms
    eagerly."""
    from cudaopt.synth.api import SynthOptions, build_run, parse_window
    from cudaopt.synth.report import summary_table
    from cudaopt.synth.runner import Progress as SynthProgress

    err = Console(stderr=True)
    try:
        options = SynthOptions(n, out, seed, max_ops, list(against or []), device,
                               parse_window(eager_ms) if eager_ms else None, model,
                               api_base, timeout)
        with err.status("reading the operators of the installed torch"):
            run = build_run(options)
    except BadInput as exc:
        raise fail(str(exc)) from exc
    columns = (TextColumn("synth"), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.fields[tried]} tried"), TimeElapsedColumn(),
               TextColumn("eta"), TimeRemainingColumn(), TextColumn("{task.fields[last]}"))
    with Progress(*columns, console=err, transient=True) as bar:
        job = bar.add_task("synth", total=n, tried=0, last="")
        started = time.monotonic()

        def show(p: SynthProgress) -> None:
            # one line per try above the bar: a log (no terminal) shows no bar at all
            bar.console.print(f"{p.kept}/{p.wanted} kept, try {p.tried} "
                              f"({time.monotonic() - started:.0f} s): {escape(p.last)}",
                              highlight=False)
            bar.update(job, completed=p.kept, tried=p.tried, last=p.last[:30])

        summary = run.synthesize(show)
    Console(width=80).print(summary_table(summary))
    if summary.gave_up:
        err.print(f"stopped after {summary.tried} tries short of {n} tasks; run again "
                  "to continue, or widen --eager-ms", highlight=False)
        raise typer.Exit(1)
