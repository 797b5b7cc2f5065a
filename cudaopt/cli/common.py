"""What several command modules share, so that no command reaches into another's module:
the options every judging command takes, the settings layered under them, and the steps
`optimize` and `bench` (or `show`) both take before any work: the device, the sandbox, a
run found again from a short name.

Every command module imports this one, and every `cudaopt` command imports every command
module (typer reads them all to parse), so what it needs only in one step is imported in
that step: the agent's `cudaopt verify` and `profile` pay for no git, sandbox or run index.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console

from cudaopt.cli.style import fail
from cudaopt.config import ConfigError, Settings, load_settings
from cudaopt.judge import JudgeOptions

if TYPE_CHECKING:
    from cudaopt.runs.folder import RunMeta
    from cudaopt.sandbox import Sandbox

EXIT_INTERRUPTED = 130
LATEST = ("latest", "last")
DEFAULTS = Settings()


def setting_opt(flag: str, metavar: str, help: str, shown: object = None, **kw: Any) -> Any:
    """An option left None unless given, so the configuration layers (or the command) fill
    it in; `shown` says what they give by default, in the help as every other default is."""
    if shown is not None:
        help += f"  [default: {shown}]"
    return typer.Option(None, flag, metavar=metavar, help=help, show_default=False, **kw)


DeviceOpt = setting_opt("--device", "DEVICE", "cuda, cuda:N or cpu",
                        "cuda when present, else cpu")
JsonOpt = setting_opt("--json", "PATH", "also write the JSON verdict to PATH ('-': stdout)")
AtolOpt = setting_opt("--atol", "X", "absolute tolerance", DEFAULTS.atol)
RtolOpt = setting_opt("--rtol", "X", "relative tolerance", DEFAULTS.rtol)
TrialsOpt = setting_opt("--trials", "N", "verification trials, each on fresh inputs",
                        DEFAULTS.trials)
AllowOpt = setting_opt("--allow", "OP", "aten operator the candidate may run (repeatable, "
                       "e.g. --allow mm; '*' allows all)")
TimeoutOpt = setting_opt("--timeout", "SECONDS", "time limit of each candidate step",
                         f"{DEFAULTS.timeout_s:g}")
ModeOpt = setting_opt("--compile-mode", "MODE", "torch.compile mode(s) of the baseline, "
                      "comma-separated (e.g. default,max-autotune-no-cudagraphs): the fastest "
                      "is the baseline", DEFAULTS.compile_mode)
BudgetOpt = typer.Option(10.0, "--time-budget", metavar="SECONDS",
                         help="timing stops once the spread is small or this is spent")


def layered_options(model: Path, device: str | None, atol: float | None, rtol: float | None,
                    trials: int | None, allow: list[str] | None, timeout: float | None,
                    compile_mode: str | None, **judge: Any) -> JudgeOptions:
    """Flags over the configuration layers (`cudaopt config` shows them) found from the
    folder of `model` (a task file, or any file in the folder the command serves), as
    `optimize` reads them."""
    flags = {"device": device, "atol": atol, "rtol": rtol, "trials": trials,
             "allow": allow or None, "timeout_s": timeout, "compile_mode": compile_mode}
    try:
        settings = load_settings(model.resolve().parent, flags)
    except ConfigError as exc:
        raise fail(str(exc)) from exc
    return replace(settings.judge_options(), **judge)


def device_for(settings: Settings) -> tuple[str, str]:
    """(kind for the workspace: cuda|cpu, device for the judge), "auto" resolved."""
    from cudaopt.cli import runcheck

    try:
        return runcheck.resolve_device(settings.device)
    except runcheck.NotReady as exc:
        raise fail(str(exc)) from exc


def sandbox_for(settings: Settings, env_dirs: list[Path], console: Console) -> Sandbox:
    """The agent shell's sandbox: refusing to start beats an unconfined shell by surprise.
    `env_dirs` hold the `.env` files just loaded; their settings never reach the shell."""
    from cudaopt.sandbox import SandboxUnavailable, resolve_sandbox

    try:
        sandbox = resolve_sandbox(settings.sandbox, dotenv_dirs=env_dirs)
    except SandboxUnavailable as exc:
        raise fail(str(exc)) from exc
    if sandbox.warning:
        console.print(sandbox.warning, style="yellow", markup=False, highlight=False)
    return sandbox


def load_env_files(folders: list[Path]) -> None:
    """Provider keys from `.env` files (working folder, then the task's); real env wins."""
    from dotenv import load_dotenv

    for folder in folders:
        if (folder / ".env").is_file():
            load_dotenv(folder / ".env", override=False)


def where(dirs: list[Path]) -> str:
    """The folders searched, short enough for one line of an error or a hint."""
    shown = [str(d) for d in dirs[:3]] + (["…"] if len(dirs) > 3 else [])
    return ", ".join(shown)


def find_run(run: str, dirs: list[Path]) -> Path:
    """A run directory from a path, a run id, a unique id prefix, or `latest`."""
    from cudaopt.runs.index import list_runs

    path = Path(run)
    if (path / "meta.json").is_file():
        return path
    found: list[tuple[Path, RunMeta]] = list_runs(dirs)
    if run in LATEST and found:
        return found[0][0]
    exact = [p for p, meta in found if run in (meta.run_id, p.name)]
    matches = exact or [p for p, meta in found if p.name.startswith(run)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        names = ", ".join(p.name for p in matches[:5])
        raise fail(f"{run!r} matches several runs ({names}); give more of the id")
    raise fail(f"no run {run!r} found from {where(dirs)}; `cudaopt runs` lists them")
