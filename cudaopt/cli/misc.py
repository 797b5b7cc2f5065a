"""`cudaopt runs`, `show`, `config` and `doctor`: looking back at runs and at the machine.

Thin on purpose: each command reads with the library and renders; `--json` output is plain
JSON on stdout for scripts, and errors go to stderr with exit code 2.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from cudaopt.cli.common import find_run, load_env_files, where
from cudaopt.cli.doctor import FAIL, Check, assess, run_doctor
from cudaopt.cli.style import fail
from cudaopt.config import SPECS, ConfigError, Settings, load_settings
from cudaopt.reports.run import fmt_speedup, load_run, render_run, run_to_json
from cudaopt.runs.folder import RunMeta, task_name
from cudaopt.runs.index import list_runs, search_dirs

if TYPE_CHECKING:
    from cudaopt.agent.policy.context import Budget

STATUS_STYLE = {"pass": "green", "fail": "red", "warn": "yellow", "skip": "dim",
                "accepted": "green", "not_accepted": "yellow", "interrupted": "yellow",
                "failed": "red", "running": "cyan", "absent": "dim"}


def _echo_json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2))


def _search_dirs(dirs: list[Path] | None) -> list[Path]:
    """Folders whose `.cudaopt/` hold or index runs; a task file stands for its folder.
    By default the working folder and every folder above it to the repository root."""
    if not dirs:
        return search_dirs()
    return [d.parent if d.is_file() else d for d in dirs]


def runs_table(found: list[tuple[Path, RunMeta]], width: int) -> Table:
    """Readable at 80 columns: the run id (what `show` takes; it names the task and the
    start time) never shrinks, the model wraps. A branch named after its run, as cudaopt
    names them, goes to the caption below a narrow table, and the start time, which the
    run id holds, shows only when there is room."""
    wide = width >= 120
    custom = any(m.branch and not m.branch.endswith(m.run_id) for _, m in found)
    committed = any(m.branch for _, m in found)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("run", no_wrap=True, min_width=max(len(m.run_id) for _, m in found))
    table.add_column("result", no_wrap=True)
    table.add_column("vs compile", justify="right", no_wrap=True)
    table.add_column("model", overflow="fold")
    if wide or custom:
        table.add_column("branch", overflow="fold")
    elif committed:
        table.caption = "an accepted run's kernel is on branch <prefix><run id>"
    if wide:
        table.add_column("started", no_wrap=True)
    for _, meta in found:  # Text throughout: never parsed as markup
        cells = [Text(meta.run_id), Text(meta.status, style=STATUS_STYLE.get(meta.status, "")),
                 Text(fmt_speedup(meta.best_speedup_vs_compile)), Text(meta.model)]
        if wide or custom:
            cells.append(Text(meta.branch or "-"))
        if wide:
            cells.append(Text(meta.started[:16].replace("T", " ")))
        table.add_row(*cells)
    return table


def runs_command(
    dirs: list[Path] | None = typer.Argument(
        None, metavar="FOLDER", show_default=False,
        help="task folder (or task file) to look in  [default: the working folder and those "
        "above it, up to the repository root]"),
    as_json: bool = typer.Option(False, "--json", help="print JSON for scripts"),
) -> None:
    """List past runs, newest first.

    Each with its result, best speedup, model, branch and start time. Found from anywhere
    in the repository: the runs of the working folder and of each folder above it, and
    those the repository root's index points to."""
    searched = _search_dirs(dirs)
    found = list_runs(searched)
    if as_json:
        _echo_json([{"run_dir": str(path), "task_name": task_name(Path(meta.task)),
                     **asdict(meta)} for path, meta in found])
        return
    if not found:
        typer.echo(f"no runs found in {where(searched)} (a run lives in <task folder>/.cudaopt/"
                   "runs and is indexed at its repository's root)")
        return
    console = Console()
    console.print(runs_table(found, console.width))


def show_command(
    run: str = typer.Argument(..., metavar="RUN",
                              help="run id, unique id prefix, `latest`, or run folder"),
    folder: list[Path] | None = typer.Option(
        None, "--dir", metavar="FOLDER", show_default=False,
        help="task folder to look in (repeatable)  [default: as `cudaopt runs`]"),
    as_json: bool = typer.Option(False, "--json", help="print JSON for scripts"),
) -> None:
    """Show a run's report again.

    Timings with spread, speedups, versions, branch and cost, as at the end of the run."""
    run_dir = find_run(run, _search_dirs(folder))
    try:
        record = load_run(run_dir)
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise fail(f"cannot read run {run_dir}: {exc}") from exc
    if as_json:
        _echo_json(run_to_json(record))
    else:
        render_run(record, Console())


def config_command(
    start: Path | None = typer.Argument(
        None, metavar="PATH", show_default=False,
        help="task file or folder the project config is found from  [default: .]"),
    as_json: bool = typer.Option(False, "--json", help="print JSON for scripts"),
) -> None:
    """Show the effective settings and the layer each came from."""
    if start is not None and not start.exists():
        raise fail(f"{start}: no such file or folder")
    try:
        settings = load_settings(start)
    except ConfigError as exc:
        raise fail(str(exc)) from exc
    live_model = settings.model and not settings.model.startswith("replay:")
    if as_json:
        data = settings.to_json()
        if live_model:  # what a run of it would start with, as the table's last line says
            budget = _budget(settings)
            data["context_budget"] = {"value": budget.to_json(), "source": budget.source}
        _echo_json(data)
        return
    table = Table("setting", "value", "from", "meaning")
    for key, value in settings.values().items():
        shown = "-" if value is None else json.dumps(value)
        table.add_row(key, escape(shown), escape(settings.sources[key]), SPECS[key].help)
    Console().print(table)
    if live_model:
        Console().print(escape(f"{settings.model}: {_budget(settings).describe()}"))


def _budget(settings: Settings) -> Budget:
    """The context budget a run of the configured model would start with."""
    from cudaopt.agent.policy import context, llm_info

    windows = [(llm_info.litellm_window(settings.model or ""), "litellm's model information"),
               (llm_info.card_window(settings.model or "", settings.api_base, timeout_s=3.0),
                "the endpoint's model card")]
    return context.resolve(windows, settings.context_tokens)


def _doctor_settings() -> tuple[Settings | None, Check]:
    """Settings for doctor; a broken config file is one more failed check, not a crash."""
    try:
        settings = load_settings()
    except ConfigError as exc:
        return None, Check("config", FAIL, str(exc), "fix the file or key named above")
    layers = sorted({s for s in settings.sources.values() if s != "default"})
    return settings, Check("config", "pass", "; ".join(layers) or "defaults only")


def doctor_command(
    model: str | None = typer.Option(
        None, "--model", metavar="MODEL", show_default=False,
        help="litellm model to ping  [default: the configured model]"),
    api_base: str | None = typer.Option(
        None, "--api-base", metavar="URL", help="OpenAI-compatible endpoint of the model"),
    quick: bool = typer.Option(False, "--quick", help="skip the trial kernel builds"),
    as_json: bool = typer.Option(False, "--json", help="print JSON for scripts"),
) -> None:
    """Check what this machine can do.

    The CPU path (compiler, ninja, a trial build), the CUDA path (GPU, driver, nvcc, a
    trial CUDA build), the sandbox and the model.

    Exit 0 everything works; 3 the CPU path works but not everything (e.g. no GPU, no
    sandbox: the summary says what); 1 nothing can be judged here."""
    settings, config_check = _doctor_settings()
    if settings is not None:
        model = model or settings.model
        api_base = api_base or settings.api_base
    if model:  # keys as `optimize` finds them
        load_env_files([Path.cwd()])
    checks = [config_check, *run_doctor(model, api_base, build=not quick)]
    code, summary = assess(checks)
    if as_json:
        _echo_json([c.to_json() for c in checks])
    else:
        console = Console(highlight=False, soft_wrap=True)
        for c in checks:
            style = STATUS_STYLE[c.status]
            console.print(f"[{style}]{c.status.upper():6}[/]  {c.name:10}  {escape(c.detail)}")
            if c.hint and c.status != "pass":
                console.print(f"        {'':10}  [dim]{escape(c.hint)}[/]")
        console.print()
        for line in summary:
            console.print(escape(line))
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    """Add this module's commands to the `cudaopt` app."""
    app.command("runs")(runs_command)
    app.command("show")(show_command)
    app.command("config")(config_command)
    app.command("doctor")(doctor_command)
