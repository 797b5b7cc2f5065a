"""What `cudaopt optimize` does before its first model call: the checks that cost nothing,
the task loaded and run once, and the run's configuration from the settings. Apart from
the command itself so that the command reads as the run's story, start to branch."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from cudaopt.agent.config import Limits, RunConfig
from cudaopt.agent.events import OnEvent
from cudaopt.agent.run import RunResult, resume_run
from cudaopt.cli import runcheck
from cudaopt.cli.common import device_for
from cudaopt.cli.style import fail
from cudaopt.config import Settings
from cudaopt.judge import JudgeOptions
from cudaopt.runs.folder import RunMeta
from cudaopt.sandbox import Sandbox


def ready(settings: Settings, task: Path, before: RunMeta | None, commit: bool,
          init_repo: bool, branch: str | None) -> None:
    """The checks that cost nothing, before anything that costs time or money."""
    try:
        kind = runcheck.resolve_device(settings.device)[0]
        runcheck.check_backend(settings.backend, kind, before)
        if before is None and settings.model:
            runcheck.check_replay(settings.model, kind)
        runcheck.check_repository(task, commit, init_repo, branch)
    except runcheck.NotReady as exc:
        raise fail(str(exc)) from exc


def check_task(task: Path, options: JudgeOptions, console: Console) -> None:
    """The task loaded and run once on the device, as the judge will: seconds, not a run."""
    with console.status(f"checking the task: loading it and running Model once on "
                        f"{options.device}"):
        try:
            runcheck.check_runnable_task(task, options)
        except runcheck.NotReady as exc:
            raise fail(str(exc)) from exc


def resume(
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


def run_config(
    settings: Settings,
    tools: bool | None,
    bash_timeout_s: float,
    run_dir: Path | None,
    sandbox: Sandbox,
) -> RunConfig:
    """A new run's configuration; without a model there is nothing to run."""
    if not settings.model:
        raise fail(
            "no model: give --model (a litellm model string or replay:PATH), or set "
            "`model` in cudaopt.toml"
        )
    return RunConfig(
        model=settings.model,
        device=device_for(settings)[0],
        backend=settings.backend,
        api_base=settings.api_base,
        tools=tools,
        limits=_limits(settings),
        judge=_judge_options(settings),
        bash_timeout_s=bash_timeout_s,
        context_tokens=settings.context_tokens,
        run_dir=run_dir,
        sandbox=sandbox,
    )


def _limits(settings: Settings) -> Limits:
    return Limits(settings.max_steps, settings.max_cost, settings.max_minutes)


def _judge_options(settings: Settings) -> JudgeOptions:
    options = settings.judge_options()
    options.device = device_for(settings)[1]
    return options
