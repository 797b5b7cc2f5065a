"""`cudaopt optimize`: drive a model through the agent loop to a faster, verified kernel.

Thin: settings and flags in, `cudaopt.agent.run` does the work, the live view shows it, and
an accepted result goes to a git branch (`cudaopt.gitops`) unless `--no-commit`.
Exit codes: 0 accepted, 1 finished without an accepted kernel, 2 bad input or the model
could not be reached, 3 accepted but the commit failed, 130 interrupted (resumable).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from functools import partial
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from cudaopt import gitops
from cudaopt.agent.events import OnEvent
from cudaopt.agent.loop import Limits
from cudaopt.agent.models import PreflightError
from cudaopt.agent.run import RunConfig, RunResult, resume_run, start_run
from cudaopt.config import ConfigError, Settings, load_settings
from cudaopt.judge import JudgeOptions
from cudaopt.live import LiveView
from cudaopt.rundir import read_meta, write_meta
from cudaopt.sandbox import Sandbox, SandboxUnavailable, resolve_sandbox

EXIT_NOT_ACCEPTED, EXIT_BAD_INPUT, EXIT_COMMIT_FAILED, EXIT_INTERRUPTED = 1, 2, 3, 130


def _fail(message: str, code: int = EXIT_BAD_INPUT) -> typer.Exit:
    Console(stderr=True).print(f"error: {message}", markup=False, highlight=False)
    return typer.Exit(code)


def _load_env_files(folders: list[Path]) -> None:
    """Provider keys from `.env` files (working folder, then the task's); real env wins."""
    from dotenv import load_dotenv

    for folder in folders:
        if (folder / ".env").is_file():
            load_dotenv(folder / ".env", override=False)


def _device(settings: Settings) -> tuple[str, str]:
    """(kind for the workspace: cuda|cpu, device for the judge), "auto" resolved."""
    import torch

    device = settings.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise _fail(f"--device {device}: no CUDA device here; use --device cpu")
    return ("cuda" if device.startswith("cuda") else "cpu"), device


def _view(console: Console) -> tuple[AbstractContextManager[Any], Any]:
    """The live view: redrawn on a terminal, one plain line per event when piped."""
    view = LiveView(console)
    return view, view.on_event


def _commit(
    task: Path,
    data: dict[str, Any],
    settings: Settings,
    branch: str | None,
    console: Console,
    init_repo: bool,
) -> int:
    """The git step, from the run's "done" event: an accepted, freshly re-checked best lands
    on a new branch before the final report is shown, so the report names the branch."""
    run_dir, meta = data["run_dir"], data["meta"]

    def commit() -> gitops.CommitResult:
        return gitops.commit_accepted(
            task, run_dir / "best", data["verdict"], meta, branch, prefix=settings.branch_prefix
        )

    try:
        try:
            done = commit()
        except gitops.NotARepoError:
            if not init_repo:
                raise
            console.print(f"initialised a git repository in {gitops.init_repo(task.parent)}")
            done = commit()
    except gitops.GitOpsError as exc:
        console.print(f"[red]not committed:[/] {exc}\nthe accepted kernel is in {run_dir / 'best'}")
        return EXIT_COMMIT_FAILED
    write_meta(run_dir, meta)
    console.print(f"committed to branch [bold]{done.branch}[/] ({done.commit[:10]})")
    for note in done.notes:
        console.print(f"  note: {note}")
    return 0


def _exit_code(result: RunResult) -> int:
    if result.reason == "interrupted":
        return EXIT_INTERRUPTED
    return 0 if result.accepted else EXIT_NOT_ACCEPTED


def register(app: typer.Typer) -> None:
    @app.command("optimize")
    def optimize_cmd(
        task: Path = typer.Argument(None, help="task file in KernelBench format (model.py)"),
        model: str = typer.Option(
            None,
            "--model",
            help="litellm model string, or replay:PATH to replay a recorded trajectory",
        ),
        api_base: str = typer.Option(None, "--api-base", help="OpenAI-compatible endpoint"),
        device: str = typer.Option(
            None, "--device", help="cuda or cpu (default: cuda when present)"
        ),
        max_steps: int = typer.Option(None, "--max-steps", help="model calls before stopping"),
        max_cost: float = typer.Option(None, "--max-cost", help="model spend limit, USD"),
        max_minutes: float = typer.Option(None, "--max-minutes", help="wall-clock limit"),
        resume: str = typer.Option(None, "--resume", help="continue a run: its folder or id"),
        no_commit: bool = typer.Option(False, "--no-commit", help="do not commit the result"),
        init_repo: bool = typer.Option(
            False, "--init-repo", help="git init the task's folder if it is in no repository"
        ),
        branch: str = typer.Option(None, "--branch", help="branch for the accepted kernel"),
        run_dir: Path = typer.Option(
            None,
            "--run-dir",
            help="where to keep this run's state (default: <task folder>/.cudaopt/runs/<id>)",
        ),
        tools: bool = typer.Option(
            None,
            "--tools/--no-tools",
            help="function calling or fenced action blocks (default: detect)",
        ),
        bash_timeout: float = typer.Option(
            600.0, "--bash-timeout", help="seconds per shell command of the agent"
        ),
        sandbox: str = typer.Option(
            None,
            "--sandbox",
            help="auto | bwrap | none: the agent's shell runs in a bubblewrap sandbox "
            "(auto, bwrap: refuse to start without one); none runs it unconfined",
        ),
    ) -> None:
        """Optimize TASK: the model writes kernels until the judge finds one at least 5%
        faster than torch.compile. Exit 0 accepted, 1 not accepted, 2 bad input or model
        unreachable, 3 accepted but not committed, 130 interrupted (use --resume)."""
        if (task is None) == (resume is None):
            raise _fail("give a task file, or --resume RUN (not both)")
        found = _find_run(resume) if resume else None
        before = read_meta(found) if found else None
        task_file = Path(before.task) if before else task
        if not task_file.is_file():
            raise _fail(f"{task_file}: no such task file")
        env_dirs = [Path.cwd(), task_file.resolve().parent]
        _load_env_files(env_dirs)
        flags = {
            "model": model,
            "api_base": api_base,
            "device": device or (before.device if before else None),
            "max_steps": max_steps,
            "max_cost": max_cost,
            "max_minutes": max_minutes,
            "sandbox": sandbox,
        }
        try:
            settings = load_settings(task_file.resolve().parent, flags)
        except ConfigError as exc:
            raise _fail(str(exc)) from exc
        console = Console(stderr=True)
        box = _sandbox(settings, env_dirs, console)
        if found:
            explicit = any(v is not None for v in (max_steps, max_cost, max_minutes))
            launch = partial(_resume, found, settings, explicit, api_base, box)
        else:
            config = _config(settings, tools, bash_timeout, run_dir, box)
            launch = partial(start_run, task_file, config)
        committed = []

        def before_report(data: dict[str, Any]) -> None:
            final = data.get("verdict")
            if final is not None and final.accepted and settings.commit and not no_commit:
                committed.append(_commit(task_file, data, settings, branch, console, init_repo))

        result = _launch(launch, console, before_report)
        console.print(f"run folder: {result.run_dir}")
        if result.reason == "interrupted":
            console.print(f"interrupted; continue with: cudaopt optimize --resume {result.run_dir}")
        raise typer.Exit(max(committed, default=0) or _exit_code(result))


def _launch(
    launch: Callable[[OnEvent], RunResult],
    console: Console,
    before_report: Callable[[dict[str, Any]], None],
) -> RunResult:
    """Run under the live view; a model that cannot be reached is a clean exit 2.
    `before_report` sees the "done" event before the view prints the final report."""
    view, show = _view(console)

    def on_event(kind: str, data: dict[str, Any]) -> None:
        if kind == "done":
            before_report(data)
        show(kind, data)

    try:
        with view:
            return launch(on_event)
    except (PreflightError, FileExistsError) as exc:
        raise _fail(str(exc)) from exc


def _resume(
    run_dir: Path,
    settings: Settings,
    explicit_limits: bool,
    api_base: str | None,
    sandbox: Sandbox,
    on_event: OnEvent,
) -> RunResult:
    """Limits given on this command line replace the run's; otherwise it keeps its own."""
    limits = _limits(settings) if explicit_limits else None
    judge = _judge_options(settings)
    return resume_run(run_dir, on_event, limits, judge=judge, api_base=api_base, sandbox=sandbox)


def _sandbox(settings: Settings, env_dirs: list[Path], console: Console) -> Sandbox:
    """The agent shell's sandbox: refusing to start beats an unconfined shell by surprise.
    `env_dirs` hold the `.env` files just loaded; their settings never reach the shell."""
    try:
        sandbox = resolve_sandbox(settings.sandbox, dotenv_dirs=env_dirs)
    except SandboxUnavailable as exc:
        raise _fail(str(exc)) from exc
    if sandbox.warning:
        console.print(sandbox.warning, style="yellow", markup=False, highlight=False)
    return sandbox


def _limits(settings: Settings) -> Limits:
    return Limits(settings.max_steps, settings.max_cost, settings.max_minutes)


def _config(
    settings: Settings,
    tools: bool | None,
    bash_timeout_s: float,
    run_dir: Path | None,
    sandbox: Sandbox,
) -> RunConfig:
    if not settings.model:
        raise _fail(
            "no model: give --model (a litellm model string or replay:PATH), or set "
            "`model` in cudaopt.toml"
        )
    return RunConfig(
        model=settings.model,
        device=_device(settings)[0],
        api_base=settings.api_base,
        tools=tools,
        limits=_limits(settings),
        judge=_judge_options(settings),
        bash_timeout_s=bash_timeout_s,
        run_dir=run_dir,
        sandbox=sandbox,
    )


def _judge_options(settings: Settings) -> JudgeOptions:
    options = settings.judge_options()
    options.device = _device(settings)[1]
    return options


def _find_run(run: str) -> Path:
    from cudaopt.cli_misc import find_run

    return find_run(run, [Path.cwd()])
