"""`profile-model`, `extract`, `check-model`: from a user's own model to tasks and back."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console

from cudaopt.cli.common import setting_opt
from cudaopt.task import BadInput

if TYPE_CHECKING:
    from cudaopt.models.entry import Entry
    from cudaopt.models.wholemodel import ModelCheck

DeviceOpt = setting_opt("--device", "DEVICE", "cuda or cpu", "cuda when present, else cpu",
                        envvar="CUDAOPT_DEVICE")
EntryArg = typer.Argument(..., metavar="ENTRY", help="path/to/file.py:callable or "
                          "package.module:callable returning (model, inputs)")


def _fail(err: Console, exc: Exception) -> None:
    err.print(f"[red]error:[/red] {exc}", highlight=False)
    raise typer.Exit(2)


def _write_json(data: object, where: str, out: Console) -> None:
    text = json.dumps(data, indent=2) + "\n"
    if where == "-":
        sys.stdout.write(text)
    else:
        Path(where).write_text(text)
        out.print(f"wrote {where}")


def register(app: typer.Typer) -> None:
    """Add `profile-model`, `extract` and `check-model` to the `cudaopt` app."""
    app.command("profile-model")(profile_cmd)
    app.command("extract")(extract_cmd)
    app.command("check-model")(check_model_cmd)


def profile_cmd(
    entry: str = EntryArg, device: str = DeviceOpt,
    json_path: str = setting_opt("--json", "PATH", "also write the profile as JSON to "
                                 "PATH ('-': stdout)"),
    iters: int = typer.Option(10, "--iters", metavar="N", min=1,
                              help="timed forwards per pass"),
    compile: bool = typer.Option(True, "--compile/--no-compile",
                                 help="also time the model under torch.compile"),
    rows: int = typer.Option(20, "--rows", metavar="N", min=1, help="rows of the table"),
) -> None:
    """Time ENTRY's model module by module.

    Self and inclusive shares, calls per forward, input shapes and dtypes, eagerly and
    under torch.compile."""
    from cudaopt.judge import resolve_device
    from cudaopt.models.entry import load_entry, parse_entry
    from cudaopt.models.profile import profile_model
    from cudaopt.models.report import profile_table

    err, out = Console(stderr=True), Console(stderr=json_path == "-")
    try:
        parsed = parse_entry(entry)
        dev = resolve_device(device)
        with err.status("building the model") as status:
            model, inputs = load_entry(parsed, dev)
            prof = profile_model(model, inputs, dev, iters, compile, status.update)
    except BadInput as exc:
        _fail(err, exc)
    out.print(profile_table(prof, rows))
    if prof.compile_error:
        out.print(f"torch.compile failed: {prof.compile_error}", highlight=False)
    if json_path:
        _write_json(prof.to_json(), json_path, out)


def extract_cmd(
    entry: str = EntryArg,
    modules: list[str] = typer.Argument(None, metavar="MODULE", show_default=False,
                                        help="module paths; globs: blocks.*.mlp (or "
                                        "--top N)"),
    top: int = setting_opt("--top", "N", "the N hottest parts (identical modules count "
                           "together)", min=1),
    out_dir: Path = typer.Option(Path("cudaopt-tasks"), "--out", metavar="DIR",
                                 help="folder for the task files"),
    device: str = DeviceOpt,
) -> None:
    """Write KernelBench task files for parts of ENTRY's model.

    One per group of identical submodules, ready for `cudaopt check`, `optimize` and
    `bench`."""
    from cudaopt.judge import resolve_device
    from cudaopt.models.entry import parse_entry
    from cudaopt.models.extract import extract

    err = Console(stderr=True)
    try:
        parsed = parse_entry(entry)
        dev = resolve_device(device)
        with err.status("extracting") as status:
            found = extract(parsed, out_dir, dev, modules or None, top, status.update)
    except BadInput as exc:
        _fail(err, exc)
    from cudaopt.models.report import extracted_table

    Console().print(extracted_table(found))


def check_model_cmd(
    entry: str = EntryArg,
    swaps: list[str] = typer.Option(..., "--swap", metavar="PATTERN=SOURCE",
                                    show_default=False, help="submodules (blocks.*.mlp) "
                                    "and a run folder, branch or folder holding "
                                    "model_new.py (repeatable)"),
    device: str = DeviceOpt,
    json_path: str = setting_opt("--json", "PATH", "also write the result as JSON to PATH "
                                 "('-': stdout)"),
    atol: float = typer.Option(1e-2, "--atol", metavar="X", help="absolute tolerance"),
    rtol: float = typer.Option(1e-2, "--rtol", metavar="X", help="relative tolerance"),
    trials: int = typer.Option(5, "--trials", metavar="N", min=1,
                               help="verification trials, each on fresh inputs"),
    time_budget: float = typer.Option(10.0, "--time-budget", metavar="SECONDS",
                                      help="timing per judgement"),
    compile_mode: str = typer.Option(None, "--compile", metavar="MODE", show_default=False,
                                     help="also judge it compiled with torch.compile MODE "
                                     "(one of default, reduce-overhead, max-autotune, ...) "
                                     "against the original compiled alike; counts graph "
                                     "breaks and recompiles"),
    commit: bool = typer.Option(False, "--commit/--no-commit", help="commit a correct "
                                "result to a new branch with a load_optimized() module"),
    branch: str = setting_opt("--branch", "NAME", "name of that branch",
                              "cudaopt/model-<date>-<time>"),
) -> None:
    """Judge ENTRY's model with accepted kernels swapped in.

    As `check` judges a task: fresh inputs, outputs against the original, speedups vs
    eager and torch.compile; each kernel's own speedup beside the end-to-end one. With
    --compile MODE, also compiled against compiled."""
    from cudaopt.judge import JudgeOptions, resolve_device
    from cudaopt.models.entry import parse_entry
    from cudaopt.models.report import model_check_lines, model_check_table
    from cudaopt.models.wholemodel import check_model, parse_swaps

    err, out = Console(stderr=True), Console(stderr=json_path == "-")
    try:
        parsed, pairs = parse_entry(entry), parse_swaps(swaps)
        options = JudgeOptions(device=resolve_device(device), atol=atol, rtol=rtol,
                               trials=trials, time_budget_s=time_budget)
        with err.status("checking the swaps") as status:
            result = check_model(parsed, pairs, options, status.update,
                                 compile_mode=compile_mode)
    except BadInput as exc:
        _fail(err, exc)
    out.print(model_check_table(result))
    for line in model_check_lines(result):
        out.print(line, highlight=False)
    if json_path:
        _write_json(result.to_json(), json_path, out)
    if commit:
        _commit(result, parsed, branch, out, err)
    raise typer.Exit(result.exit_code)


def _commit(result: ModelCheck, entry: Entry, branch: str | None, out: Console,
            err: Console) -> None:
    from cudaopt.models.commit import commit_model
    from cudaopt.runs.gitops import GitOpsError

    if result.exit_code or not result.verdict.clean:
        err.print("not committed: the whole model or a kernel was not judged correct and clean")
        return
    try:
        done = commit_model(result, entry.file.parent if entry.file else Path.cwd(), branch)
    except GitOpsError as exc:
        err.print(f"[red]not committed:[/red] {exc}", highlight=False)
        raise typer.Exit(3) from exc
    out.print(f"committed {done.commit[:10]} on branch {done.branch}", highlight=False)
    for note in done.notes:
        out.print(f"note: {note}", highlight=False)
