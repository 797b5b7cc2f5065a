"""`cudaopt bench`: a model or a folder of kernels over whole suites, on every local GPU.

    cudaopt bench SUITE... (--model M | --candidates DIR) [--device] [--gpus] [--out BENCH]
    cudaopt bench show BENCH
    cudaopt bench compare BENCH_A BENCH_B

Exit codes: 0 done, 2 bad input, 130 interrupted (run the same command again to continue).
"""

from __future__ import annotations

import signal
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from typer.core import TyperGroup

from cudaopt.cli.common import (
    DEFAULTS,
    EXIT_INTERRUPTED,
    BudgetOpt,
    DeviceOpt,
    TimeoutOpt,
    TrialsOpt,
    device_for,
    sandbox_for,
    setting_opt,
)
from cudaopt.cli.style import fail
from cudaopt.config import ConfigError, load_settings
from cudaopt.runs.folder import state_dir

if TYPE_CHECKING:  # the library is imported where a step needs it: see `common`
    from cudaopt.bench.runner import BenchConfig


class _RunByDefault(TyperGroup):
    """`cudaopt bench SUITE…` means `cudaopt bench run SUITE…`."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """`ctx` is the click Context typer vendors (typer._click), which has no public name."""
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


bench_app = typer.Typer(cls=_RunByDefault, no_args_is_help=True, help=(
    "Bench a model or existing kernels over whole suites.\n\nA model (--model) or a folder "
    "of existing kernels (--candidates) over suites of KernelBench-format tasks; "
    "`bench SUITE...` is `bench run SUITE...`."))


@bench_app.command("run")
def run_cmd(
    suites: list[Path] = typer.Argument(..., metavar="SUITE", show_default=False,
                                        help="task files or folders (KernelBench/level1 …)"),
    model: str = setting_opt("--model", "MODEL", "agent mode: a litellm model string, or "
                             "replay:PATH"),
    candidates: Path = setting_opt("--candidates", "DIR", "candidate mode: a folder of existing "
                                   "kernels (layouts: see docs/bench.md)"),
    sample: int = typer.Option(0, "--sample", metavar="S", help="KernelBench layout: which "
                               "sample of each problem"),
    api_base: str = setting_opt("--api-base", "URL", "OpenAI-compatible endpoint"),
    device: str = DeviceOpt,
    gpus: str = setting_opt("--gpus", "LIST", "GPUs to use, e.g. 0,1", "all"),
    workers: int = typer.Option(1, "--workers", metavar="N", min=1,
                                help="CPU slots with --device cpu"),
    lookahead: int = setting_opt("--lookahead", "N", "jobs each GPU slot prepares while it "
                                 "times another", "what the spare cores and GPU memory carry",
                                 min=0),
    out: Path = setting_opt("--out", "BENCH", "bench folder; an existing one is continued",
                            "a new one under .cudaopt/bench/"),
    work: Path = setting_opt("--work", "DIR", "where jobs are built and judged; benches sharing "
                             "one reuse builds", "BENCH/work"),
    max_steps: int = setting_opt("--max-steps", "N", "agent mode: model calls per task",
                                 DEFAULTS.max_steps),
    max_cost: float = setting_opt("--max-cost", "USD", "agent mode: model spend per task",
                                  DEFAULTS.max_cost),
    max_minutes: float = setting_opt("--max-minutes", "MINUTES", "agent mode: wall time per task",
                                     DEFAULTS.max_minutes),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="re-run tasks that are "
                                      "not correct too (machine failures always re-run)"),
    trials: int = TrialsOpt, timeout: float = TimeoutOpt, time_budget: float = BudgetOpt,
    profile: bool = typer.Option(True, "--profile/--no-profile", help="time candidates too"),
    sandbox: str = setting_opt("--sandbox", "MODE", "auto | bwrap | none, as in optimize",
                               DEFAULTS.sandbox),
    backend: str | None = setting_opt("--backend", "NAME", "agent mode: the kernel language the "
                               "agent writes, cuda or triton (candidates carry their own)",
                               DEFAULTS.backend),
    ray: str = setting_opt("--ray", "ADDRESS", "run on a Ray cluster: auto (RAY_ADDRESS, or `ray "
                           "start` here) or ray://HEAD:10001"),
) -> None:
    """Run a bench, or continue it.

    Results stream to BENCH/results.jsonl."""
    from cudaopt.bench.runner import BenchConfig, plan, todo
    from cudaopt.bench.suite import SuiteError, discover

    if (model is None) == (candidates is None):
        raise fail("give --model (agent mode) or --candidates DIR (candidate mode), not both")
    if candidates is not None and not candidates.is_dir():
        raise fail(f"--candidates {candidates}: no such folder")
    if candidates is not None and backend is not None:
        raise fail("--backend is for agent mode: a candidate's files say its language")
    try:
        tasks = discover(suites)
        settings = load_settings(Path.cwd(), {"model": model, "api_base": api_base,
                                              "device": device, "max_steps": max_steps,
                                              "max_cost": max_cost, "max_minutes": max_minutes,
                                              "sandbox": sandbox, "trials": trials,
                                              "timeout_s": timeout, "backend": backend})
    except (SuiteError, ConfigError) as exc:
        raise fail(str(exc)) from exc
    console = Console(stderr=True)
    box = sandbox_for(settings, [Path.cwd()], console)
    # On a cluster the GPUs are the nodes', not this machine's: only the kind is needed here.
    kind, judge_device = ((settings.device if settings.device == "cpu" else "cuda",) * 2
                          if ray else device_for(settings))
    options = settings.judge_options()
    # slots are pinned to one GPU each: the judge sees it as "cuda"; cuda:N picks GPU N
    if judge_device.startswith("cuda:") and not gpus:
        gpus = judge_device.split(":", 1)[1]
    options.device, options.time_budget_s, options.profile = kind, time_budget, profile
    options.breakdown = candidates is None  # candidate mode reads no per-kernel breakdown
    agent = {} if candidates else _agent_params(settings, kind, box.kind, console)
    config = BenchConfig(options, candidates, sample, agent)
    bench = out or state_dir(Path.cwd()) / "bench" / datetime.now().strftime("%Y%m%d-%H%M%S")
    bench.mkdir(parents=True, exist_ok=True)
    info = {"mode": config.mode, "suites": [str(s) for s in suites], "model": model,
            "candidates": str(candidates) if candidates else None, "device": kind,
            "backend": agent.get("backend")}
    planned = plan(tasks, config, bench)
    left = todo(planned, bench, retry_failed)
    console.print(f"bench {bench}: {len(tasks)} tasks, {len(tasks) - len(left)} already done, "
                  f"{len(left)} to run ({config.mode} mode, {kind})", soft_wrap=True,
                  highlight=False)
    code = _execute(left, config, bench, work, kind, gpus, workers, box.kind, info, console,
                    ray, lookahead)
    _finish(bench, console)
    raise typer.Exit(code)


def _agent_params(settings: Any, kind: str, sandbox: str,
                  console: Console) -> dict[str, Any]:
    """The backend checked and the model preflighted once, here: a language the device
    cannot run or a dead endpoint fails the bench before any task."""
    from cudaopt.agent.environment.layout import BackendError, check_backend
    from cudaopt.agent.errors import PreflightError
    from cudaopt.agent.policy.model import make_model

    try:
        check_backend(settings.backend, kind)
    except BackendError as exc:
        raise fail(f"--backend {settings.backend}: {exc}") from exc
    try:
        make_model(settings.model, settings.api_base).preflight()
    except PreflightError as exc:
        raise fail(str(exc)) from exc
    return {"model": settings.model, "api_base": settings.api_base, "sandbox": sandbox,
            "max_steps": settings.max_steps, "max_cost": settings.max_cost,
            "max_minutes": settings.max_minutes, "backend": settings.backend}


def _execute(left: list, config: BenchConfig, bench: Path, work: Path | None, kind: str,
             gpus: str | None, workers: int, sandbox: str, info: dict[str, Any],
             console: Console, ray: str | None = None, lookahead: int | None = None) -> int:
    from cudaopt.bench import report
    from cudaopt.bench.agent_job import PLUGIN
    from cudaopt.bench.live import BenchView
    from cudaopt.bench.runner import run
    from cudaopt.executor import make_executor

    try:
        gpu_list = [int(g) for g in gpus.split(",")] if gpus else None
    except ValueError:
        raise fail(f"--gpus {gpus}: give GPU indices like 0,1") from None
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, signal.default_int_handler)
    with report.session(bench, info):
        if not left:
            return 0
        try:
            executor = make_executor(kind, gpu_list, ray=ray, workers=workers,
                                     root=work or bench / "work", sandbox=sandbox,
                                     plugins=(PLUGIN,), job_timeout_s=_job_timeout_s(config),
                                     **({} if lookahead is None else {"lookahead": lookahead}))
        except (ValueError, ImportError, ConnectionError, RuntimeError) as exc:
            raise fail(str(exc)) from exc
        try:
            with BenchView(console, len(left), f"{config.mode} on {len(executor.slots)} "
                           "slot(s)") as view:
                run(left, executor, bench, view.on_line)
        except KeyboardInterrupt:
            console.print("interrupted: finished tasks are kept; run the same command again "
                          "to continue")
            return EXIT_INTERRUPTED
        finally:
            executor.close(wait=False)
    return 0


def _job_timeout_s(config: BenchConfig) -> float:
    """When a slot that gives no answer is killed: a judgement bounds its own steps; an
    agent run stops itself after --max-minutes, then re-checks its best."""
    if config.mode == "candidates":
        return 3600.0
    return config.agent["max_minutes"] * 60 * 1.5 + 1800


def _finish(bench: Path, console: Console) -> None:
    from cudaopt.bench import report, results
    from cudaopt.bench.render import print_summary

    if not (bench / results.RESULTS).is_file():
        return
    summary, paths, hint = report.write(bench)
    print_summary(Console(), summary)
    console.print(f"wrote {', '.join(p.name for p in paths)} in {bench}"
                  + (f" ({hint})" if hint else ""), soft_wrap=True, highlight=False,
                  markup=False)


@bench_app.command("show")
def show_cmd(bench: Path = typer.Argument(..., metavar="BENCH", help="a bench folder")) -> None:
    """Show a bench's table again.

    Its summary files are rewritten from results.jsonl."""
    from cudaopt.bench import report

    try:
        _finish_checked(bench)
    except report.NotABench as exc:
        raise fail(str(exc)) from exc


def _finish_checked(bench: Path) -> None:
    from cudaopt.bench import report

    report.load(bench)
    _finish(bench, Console(stderr=True))


@bench_app.command("compare")
def compare_cmd(a: Path = typer.Argument(..., metavar="BENCH_A", help="bench A (before)"),
                b: Path = typer.Argument(..., metavar="BENCH_B", help="bench B (after)"),
                json_path: Path = setting_opt("--json", "PATH", "also write it as JSON")) -> None:
    """Compare two benches, task by task.

    Per-task changes from A to B and the change of every summary figure."""
    import json

    from cudaopt.bench import report, results
    from cudaopt.bench.compare import compare, render

    try:
        report.load(a), report.load(b)
    except report.NotABench as exc:
        raise fail(str(exc)) from exc
    old, new = (results.latest(results.read_lines(x)) for x in (a, b))
    result = compare(old, new)
    Console().print(render(result))
    if json_path:
        json_path.write_text(json.dumps(result, indent=2) + "\n")


def register(app: typer.Typer) -> None:
    app.add_typer(bench_app, name="bench")

