"""`cudaopt optimize`: drive a model through the agent loop to a faster, verified kernel.

Thin: settings and flags in, `cudaopt.agent.run` does the work, the live view shows it, and
an accepted result goes to a git branch (`cudaopt.gitops`) unless `--no-commit`. What
could make a run useless is checked first (`cudaopt.runcheck`). Exit codes: see HELP.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from cudaopt import gitops, runcheck
from cudaopt.agent.errors import PreflightError
from cudaopt.agent.events import OnEvent
from cudaopt.agent.judging import RunConfig
from cudaopt.agent.loop import Limits
from cudaopt.agent.run import RunResult, resume_run, start_run
from cudaopt.cli_style import fail
from cudaopt.config import ConfigError, Settings, load_settings
from cudaopt.judge import JudgeOptions
from cudaopt.live import LiveView
from cudaopt.rundir import RunMeta, read_meta, write_meta
from cudaopt.sandbox import Sandbox, SandboxUnavailable, resolve_sandbox

EXIT_NOT_ACCEPTED, EXIT_COMMIT_FAILED, EXIT_INTERRUPTED = 1, 3, 130


def _load_env_files(folders: list[Path]) -> None:
    """Provider keys from `.env` files (working folder, then the task's); real env wins."""
    from dotenv import load_dotenv

    for folder in folders:
        if (folder / ".env").is_file():
            load_dotenv(folder / ".env", override=False)


def device_for(settings: Settings) -> tuple[str, str]:
    """(kind for the workspace: cuda|cpu, device for the judge), "auto" resolved."""
    try:
        return runcheck.resolve_device(settings.device)
    except runcheck.NotReady as exc:
        raise fail(str(exc)) from exc


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


_DEFAULTS = Settings()
HELP = """Optimize TASK: the model writes kernels until the judge finds one at least 5% faster
than torch.compile, and the accepted kernel is committed to a new git branch.

Before the first model call, the device, the git repository and the task itself (loaded
and run once on the device) are checked. `cudaopt optimize --resume RUN` continues a run.

Exit 0 accepted, 1 not accepted, 2 bad input or model unreachable, 3 accepted but not
committed, 130 interrupted (continue with --resume)."""


def _opt(flag: str, metavar: str, help: str, shown: object = None) -> Any:
    """A setting's flag: None unless given, so the configuration layers fill it in."""
    return typer.Option(None, flag, metavar=metavar, show_default=False,
                        help=help + (f"  [default: {shown}]" if shown is not None else ""))


def register(app: typer.Typer) -> None:
    @app.command("optimize", help=HELP, epilog="Settings come from cudaopt.toml, CUDAOPT_* "
                 "and the user config too: `cudaopt config` shows them.")
    def optimize_cmd(
        task: Path = typer.Argument(None, metavar="TASK", show_default=False,
                                    help="task file in KernelBench format (model.py)"),
        model: str = _opt("--model", "MODEL", "litellm model string, or replay:PATH to replay "
                          "a recorded session"),
        api_base: str = _opt("--api-base", "URL", "OpenAI-compatible endpoint of the model"),
        device: str = _opt("--device", "DEVICE", "cuda, cuda:N or cpu",
                           "cuda when present, else cpu"),
        max_steps: int = _opt("--max-steps", "N", "model calls before the run stops",
                              _DEFAULTS.max_steps),
        max_cost: float = _opt("--max-cost", "USD", "model spend before the run stops",
                               f"{_DEFAULTS.max_cost:g}"),
        max_minutes: float = _opt("--max-minutes", "MIN", "wall-clock time before the run "
                                  "stops", f"{_DEFAULTS.max_minutes:g}"),
        context_tokens: int = _opt("--context-tokens", "N", "the model's context window, "
                                   "where litellm and the endpoint do not report one",
                                   "from litellm or the endpoint"),
        resume: str = _opt("--resume", "RUN", "continue a run (its id, id prefix, `latest` or "
                           "folder) instead of starting one"),
        no_commit: bool = typer.Option(False, "--no-commit", help="keep the accepted kernel "
                                       "in the run's best/ folder; make no branch"),
        init_repo: bool = typer.Option(False, "--init-repo", help="`git init` the task's "
                                       "folder when it is in no repository"),
        branch: str = _opt("--branch", "NAME", "branch for the accepted kernel",
                           "<prefix><run id>"),
        run_dir: Path = _opt("--run-dir", "PATH", "folder for this run's state",
                             "<task folder>/.cudaopt/runs/<run id>"),
        tools: bool = typer.Option(None, "--tools/--no-tools", show_default=False,
                                   help="function calling, or fenced action blocks  "
                                   "[default: detect]"),
        bash_timeout: float = typer.Option(600.0, "--bash-timeout", metavar="SECONDS",
                                           show_default=False, help="time limit of each shell "
                                           "command of the agent  [default: 600]"),
        sandbox: str = _opt("--sandbox", "MODE", "auto or bwrap: the agent's shell runs in "
                            "a bubblewrap sandbox, and the run refuses to start without one; "
                            "none: unconfined", _DEFAULTS.sandbox),
        verbose: bool = typer.Option(False, "--verbose", "-v", help="print every judging "
                                     "step (each trial, each timing round) on its own line"),
    ) -> None:
        if (task is None) == (resume is None):
            raise fail("give a task file, or --resume RUN (not both)")
        found = _find_run(resume) if resume else None
        before = read_meta(found) if found else None
        task_file = Path(before.task) if before else task
        if not task_file.is_file():
            raise fail(f"{task_file}: no such task file")
        env_dirs = [Path.cwd(), task_file.resolve().parent]
        _load_env_files(env_dirs)
        flags = {
            "model": model,
            "api_base": api_base,
            "device": device or (before.device if before else None),
            "max_steps": max_steps,
            "max_cost": max_cost,
            "max_minutes": max_minutes,
            "context_tokens": context_tokens,
            "sandbox": sandbox,
        }
        try:
            settings = load_settings(task_file.resolve().parent, flags)
        except ConfigError as exc:
            raise fail(str(exc)) from exc
        commit = settings.commit and not no_commit
        console = Console(stderr=True)
        _ready(settings, task_file, before, commit, init_repo, branch)
        box = sandbox_for(settings, env_dirs, console)
        if found:
            explicit = any(v is not None for v in (max_steps, max_cost, max_minutes))
            launch = partial(_resume, found, settings, explicit, api_base, box)
        else:
            config = _config(settings, tools, bash_timeout, run_dir, box)
            _check_task(task_file, config.judge_options(), console)
            launch = partial(start_run, task_file, config)
        committed = []

        def before_report(data: dict[str, Any]) -> None:
            final = data.get("verdict")
            if final is not None and final.accepted and commit:
                committed.append(_commit(task_file, data, settings, branch, console, init_repo))

        result = _launch(launch, console, before_report, verbose)
        say_where(result, commit, console)
        raise typer.Exit(max(committed, default=0) or _exit_code(result))


def say_where(result: RunResult, committed: bool, console: Console) -> None:
    """The last lines of a run: where its files are, and how to go on."""
    if result.accepted and not committed:
        console.print(f"not committed (--no-commit): the accepted kernel is in "
                      f"{result.run_dir / 'best'}", markup=False, highlight=False)
    console.print(f"run folder: {result.run_dir}", markup=False, highlight=False)
    if result.reason == "interrupted":
        console.print(f"interrupted; continue with: cudaopt optimize --resume {result.run_dir}",
                      markup=False, highlight=False)


def _ready(settings: Settings, task: Path, before: RunMeta | None, commit: bool,
           init_repo: bool, branch: str | None) -> None:
    """The checks that cost nothing, before anything that costs time or money."""
    try:
        kind = runcheck.resolve_device(settings.device)[0]
        if before is None and settings.model:
            runcheck.check_replay(settings.model, kind)
        runcheck.check_repository(task, commit, init_repo, branch)
    except runcheck.NotReady as exc:
        raise fail(str(exc)) from exc


def _check_task(task: Path, options: JudgeOptions, console: Console) -> None:
    """The task loaded and run once on the device, as the judge will: seconds, not a run."""
    with console.status(f"checking the task: loading it and running Model once on "
                        f"{options.device}"):
        try:
            runcheck.check_runnable_task(task, options)
        except runcheck.NotReady as exc:
            raise fail(str(exc)) from exc


def _launch(
    launch: Callable[[OnEvent], RunResult],
    console: Console,
    before_report: Callable[[dict[str, Any]], None],
    verbose: bool = False,
) -> RunResult:
    """Run under the live view; a model that cannot be reached is a clean exit 2.
    `before_report` sees the "done" event before the view prints the final report."""
    view = LiveView(console, verbose=verbose)
    show = view.on_event

    def on_event(kind: str, data: dict[str, Any]) -> None:
        if kind == "done":
            before_report(data)
        show(kind, data)

    try:
        with view:
            return launch(on_event)
    except (PreflightError, FileExistsError) as exc:
        raise fail(str(exc)) from exc


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
    return resume_run(run_dir, on_event, limits, judge=judge, api_base=api_base, sandbox=sandbox,
                      context_tokens=settings.context_tokens)


def sandbox_for(settings: Settings, env_dirs: list[Path], console: Console) -> Sandbox:
    """The agent shell's sandbox: refusing to start beats an unconfined shell by surprise.
    `env_dirs` hold the `.env` files just loaded; their settings never reach the shell."""
    try:
        sandbox = resolve_sandbox(settings.sandbox, dotenv_dirs=env_dirs)
    except SandboxUnavailable as exc:
        raise fail(str(exc)) from exc
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
        raise fail(
            "no model: give --model (a litellm model string or replay:PATH), or set "
            "`model` in cudaopt.toml"
        )
    return RunConfig(
        model=settings.model,
        device=device_for(settings)[0],
        api_base=settings.api_base,
        tools=tools,
        limits=_limits(settings),
        judge=_judge_options(settings),
        bash_timeout_s=bash_timeout_s,
        context_tokens=settings.context_tokens,
        run_dir=run_dir,
        sandbox=sandbox,
    )


def _judge_options(settings: Settings) -> JudgeOptions:
    options = settings.judge_options()
    options.device = device_for(settings)[1]
    return options


def _find_run(run: str) -> Path:
    from cudaopt.cli_misc import find_run

    return find_run(run, [Path.cwd()])
