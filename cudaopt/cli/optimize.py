"""`cudaopt optimize`: drive a model through the agent loop to a faster, verified kernel.

Thin: settings and flags in, `cudaopt.agent.run` does the work, the live view shows it, and
an accepted result goes to a git branch (`cudaopt.runs.gitops`) unless `--no-commit`. What
could make a run useless is checked first (`cudaopt.cli.runcheck`). Exit codes: see HELP.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console

from cudaopt.cli.common import (
    DEFAULTS,
    EXIT_INTERRUPTED,
    DeviceOpt,
    find_run,
    load_env_files,
    sandbox_for,
    setting_opt,
)
from cudaopt.cli.live import LiveView
from cudaopt.cli.style import fail
from cudaopt.config import ConfigError, Settings, load_settings
from cudaopt.runs.folder import read_meta, write_meta

if TYPE_CHECKING:  # the agent and git are imported where a step needs them: see `common`
    from cudaopt.agent.events import OnEvent
    from cudaopt.agent.run import RunResult
    from cudaopt.runs import gitops

EXIT_NOT_ACCEPTED, EXIT_COMMIT_FAILED = 1, 3


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
    from cudaopt.runs import gitops

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


HELP = """Optimize TASK: a verified kernel faster than torch.compile.

The model writes kernels until the judge finds one at least 5% faster than torch.compile,
and the accepted kernel is committed to a new git branch.

Before the first model call, the device, the git repository and the task itself (loaded
and run once on the device) are checked. `cudaopt optimize --resume RUN` continues a run.

Exit 0 accepted, 1 not accepted, 2 bad input or model unreachable, 3 accepted but not
committed, 130 interrupted (continue with --resume)."""


TaskArg = typer.Argument(None, metavar="TASK", show_default=False,
                         help="task file in KernelBench format (model.py)")
ModelOpt = setting_opt("--model", "MODEL", "litellm model string, or replay:PATH to replay a "
                       "recorded session")
ApiBaseOpt = setting_opt("--api-base", "URL", "OpenAI-compatible endpoint of the model")
StepsOpt = setting_opt("--max-steps", "N", "model calls before the run stops",
                       DEFAULTS.max_steps)
CostOpt = setting_opt("--max-cost", "USD", "model spend before the run stops",
                      f"{DEFAULTS.max_cost:g}")
MinutesOpt = setting_opt("--max-minutes", "MIN", "wall-clock time before the run stops",
                         f"{DEFAULTS.max_minutes:g}")
ContextOpt = setting_opt("--context-tokens", "N", "the model's context window, where litellm "
                         "and the endpoint do not report one", "from litellm or the endpoint")
ResumeOpt = setting_opt("--resume", "RUN", "continue a run (its id, id prefix, `latest` or "
                        "folder) instead of starting one")
NoCommitOpt = typer.Option(False, "--no-commit", help="keep the accepted kernel in the run's "
                           "best/ folder; make no branch")
InitRepoOpt = typer.Option(False, "--init-repo", help="`git init` the task's folder when it "
                           "is in no repository")
BranchOpt = setting_opt("--branch", "NAME", "branch for the accepted kernel",
                        "<prefix><run id>")
RunDirOpt = setting_opt("--run-dir", "PATH", "folder for this run's state",
                        "<task folder>/.cudaopt/runs/<run id>")
ToolsOpt = typer.Option(None, "--tools/--no-tools", show_default=False,
                        help="function calling, or fenced action blocks  [default: detect]")
BashTimeoutOpt = typer.Option(600.0, "--bash-timeout", metavar="SECONDS", show_default=False,
                              help="time limit of each shell command of the agent  "
                              "[default: 600]")
SandboxOpt = setting_opt("--sandbox", "MODE", "auto or bwrap: the agent's shell runs in a "
                         "bubblewrap sandbox, and the run refuses to start without one; none: "
                         "unconfined", DEFAULTS.sandbox)
BackendOpt = setting_opt("--backend", "NAME", "the kernel language the agent writes: cuda "
                         "(CUDA C++; C++ on the CPU) or triton (needs a GPU)",
                         DEFAULTS.backend)
VerboseOpt = typer.Option(False, "--verbose", "-v", help="print every judging step (each "
                          "trial, each timing round) on its own line")


def register(app: typer.Typer) -> None:
    """Add `optimize` to the `cudaopt` app."""
    app.command("optimize", help=HELP, epilog="Settings come from cudaopt.toml, CUDAOPT_* "
                "and the user config too: `cudaopt config` shows them.")(optimize_command)


def optimize_command(
    task: Path = TaskArg, model: str = ModelOpt, api_base: str = ApiBaseOpt,
    device: str = DeviceOpt, max_steps: int = StepsOpt, max_cost: float = CostOpt,
    max_minutes: float = MinutesOpt, context_tokens: int = ContextOpt, resume: str = ResumeOpt,
    no_commit: bool = NoCommitOpt, init_repo: bool = InitRepoOpt, branch: str = BranchOpt,
    run_dir: Path = RunDirOpt, tools: bool = ToolsOpt, bash_timeout: float = BashTimeoutOpt,
    sandbox: str = SandboxOpt, backend: str | None = BackendOpt, verbose: bool = VerboseOpt,
) -> None:
    """The run's story: find what to run, check it, run it, commit what is accepted."""
    from cudaopt.agent.run import start_run
    from cudaopt.cli import optimize_setup as setup

    if (task is None) == (resume is None):
        raise fail("give a task file, or --resume RUN (not both)")
    found = find_run(resume, [Path.cwd()]) if resume else None
    before = read_meta(found) if found else None
    task_file = Path(before.task) if before else task
    if not task_file.is_file():
        raise fail(f"{task_file}: no such task file")
    env_dirs = [Path.cwd(), task_file.resolve().parent]
    load_env_files(env_dirs)
    settings = _settings(task_file, {
        "model": model,
        "api_base": api_base,
        "device": device or (before.device if before else None),
        "max_steps": max_steps,
        "max_cost": max_cost,
        "max_minutes": max_minutes,
        "context_tokens": context_tokens,
        "sandbox": sandbox,
        "backend": backend or (before.extra.get("backend") if before else None),
    })
    commit = settings.commit and not no_commit
    console = Console(stderr=True)
    setup.ready(settings, task_file, before, commit, init_repo, branch)
    box = sandbox_for(settings, env_dirs, console)
    if found:
        explicit = any(v is not None for v in (max_steps, max_cost, max_minutes))
        launch = partial(setup.resume, found, settings, explicit, api_base, box)
    else:
        config = setup.run_config(settings, tools, bash_timeout, run_dir, box)
        setup.check_task(task_file, config.judge_options(), console)
        launch = partial(start_run, task_file, config)
    git = partial(_commit, task_file, settings=settings, branch=branch, console=console,
                  init_repo=init_repo)
    raise typer.Exit(_run(launch, git if commit else None, console, verbose))


def _settings(task: Path, flags: dict[str, Any]) -> Settings:
    """The flags over the configuration layers found from the task's folder."""
    try:
        return load_settings(task.resolve().parent, flags)
    except ConfigError as exc:
        raise fail(str(exc)) from exc


def _run(
    launch: Callable[[OnEvent], RunResult],
    commit: Callable[[dict[str, Any]], int] | None,
    console: Console,
    verbose: bool,
) -> int:
    """The run under the live view, and its exit code; an accepted kernel is committed
    (unless `commit` is None) before the final report, so the report names the branch."""
    committed = []

    def before_report(data: dict[str, Any]) -> None:
        final = data.get("verdict")
        if final is not None and final.accepted and commit is not None:
            committed.append(commit(data))

    result = _launch(launch, console, before_report, verbose)
    say_where(result, commit is not None, console)
    return max(committed, default=0) or _exit_code(result)


def say_where(result: RunResult, committed: bool, console: Console) -> None:
    """The last lines of a run: where its files are, and how to go on."""
    if result.accepted and not committed:
        console.print(f"not committed (--no-commit): the accepted kernel is in "
                      f"{result.run_dir / 'best'}", markup=False, highlight=False)
    console.print(f"run folder: {result.run_dir}", markup=False, highlight=False)
    if result.reason == "interrupted":
        console.print(f"interrupted; continue with: cudaopt optimize --resume {result.run_dir}",
                      markup=False, highlight=False)


def _launch(
    launch: Callable[[OnEvent], RunResult],
    console: Console,
    before_report: Callable[[dict[str, Any]], None],
    verbose: bool = False,
) -> RunResult:
    """Run under the live view; a model that cannot be reached is a clean exit 2.
    `before_report` sees the "done" event before the view prints the final report."""
    from cudaopt.agent.errors import PreflightError

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
