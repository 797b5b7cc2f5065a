"""`cudaopt check`, and `verify` / `profile` for use inside an agent workspace."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import typer
from rich.console import Console

from cudaopt.judge import JudgeOptions, Verdict, check
from cudaopt.judge.api import Progress
from cudaopt.report import render_verdict
from cudaopt.task import BadInput

DeviceOpt = typer.Option(None, "--device", envvar="CUDAOPT_DEVICE",
                         help="cuda or cpu (default: cuda when present)")
JsonOpt = typer.Option(None, "--json", help="write the JSON verdict to this path ('-': stdout)")
AtolOpt = typer.Option(1e-2, "--atol", help="absolute tolerance")
RtolOpt = typer.Option(1e-2, "--rtol", help="relative tolerance")
TrialsOpt = typer.Option(5, "--trials", min=1, help="verification trials, each on fresh inputs")
AllowOpt = typer.Option([], "--allow", help="aten operator the candidate may run (repeatable, "
                        "e.g. --allow mm; '*' allows all)")
TimeoutOpt = typer.Option(120.0, "--timeout", help="seconds per candidate step before it is killed")


def _modes(value: str) -> str:
    from cudaopt.config import COMPILE_MODES

    bad = [m for m in value.split(",") if m not in COMPILE_MODES]
    if bad:
        raise typer.BadParameter(f"{', '.join(map(repr, bad))}: each mode must be one of "
                                 f"{', '.join(COMPILE_MODES)}")
    return value


ModeOpt = typer.Option("default", "--compile-mode", callback=_modes,
                       help="torch.compile mode(s) of the baseline, comma-separated (e.g. "
                       "default,max-autotune-no-cudagraphs): the fastest is the baseline")
BudgetOpt = typer.Option(10.0, "--time-budget", help="seconds of timing before giving up on "
                         "a small spread")


def _judge(model: Path, candidate: Path, options: JudgeOptions, json_path: str | None,
           trace: bool = False, ncu: bool = False) -> None:
    err = Console(stderr=True)
    out = Console(stderr=json_path == "-")
    refused = _ncu_refusal(options, err) if ncu else None
    if trace:
        verdict = _check(model, candidate, options, _tracer(err))
    else:
        with err.status("judging") as status:
            verdict = _check(model, candidate, options, lambda msg: status.update(msg))
    if ncu:
        verdict.ncu = refused or _run_ncu(model, candidate, verdict, err)
    render_verdict(verdict, out)
    if json_path == "-":
        import json

        sys.stdout.write(json.dumps(verdict.to_json(), indent=2) + "\n")
    elif json_path:
        verdict.write(Path(json_path))
    _record(candidate, verdict)
    raise typer.Exit(verdict.exit_code)


def _ncu_refusal(options: JudgeOptions, err: Console) -> dict[str, object] | None:
    """Said at once, before the judging: the rest of the profile still runs."""
    from cudaopt.judge.api import resolve_device
    from cudaopt.judge.ncu import unavailable

    try:
        reason = unavailable(resolve_device(options.device))
    except BadInput:
        return None  # the judge reports the bad device
    if reason:
        err.print(f"--ncu: {reason}", highlight=False, markup=False)
        return {"available": False, "reason": reason}
    return None


def _run_ncu(model: Path, candidate: Path, verdict: Verdict,
             err: Console) -> dict[str, object]:
    from cudaopt.judge.api import default_build_dir
    from cudaopt.judge.ncu import run

    if not verdict.clean:
        return {"available": False, "reason": "not run: the candidate is not correct and clean"}
    build_dir = default_build_dir(candidate, "cuda")
    with err.status("Nsight Compute: profiling the candidate's kernels"):
        return run(model, candidate, build_dir if build_dir.is_dir() else None)


def _tracer(err: Console) -> Progress:
    """Each step on its own line with the seconds since the command started."""
    import time

    started = time.perf_counter()

    def say(message: str) -> None:
        err.print(f"{time.perf_counter() - started:7.2f} s  {message}", highlight=False)

    return say


def _check(model: Path, candidate: Path, options: JudgeOptions, progress: Progress) -> Verdict:
    """Through a warm judge when one answers: the agent run's (CUDAOPT_JUDGE_SOCKET), or a
    `cudaopt serve` for a folder holding both files; else here, cold."""
    from cudaopt.judge.serve import find_server

    socket_path = os.environ.get("CUDAOPT_JUDGE_SOCKET")
    found = None if socket_path else find_server(candidate.resolve().parent)
    if found and model.resolve().is_relative_to(found[1]):
        socket_path = str(found[0])
    if socket_path:
        from cudaopt.judge.client import remote_check

        verdict = remote_check(Path(socket_path), model, candidate, options, progress)
        if verdict is not None:
            if found:
                progress(f"judged by the warm judge `cudaopt serve` runs for {found[1]}")
            return verdict
    return check(model, candidate, options, progress)


def _record(candidate: Path, verdict: Verdict) -> None:
    """Inside an agent run, leave a copy of what was judged for the loop to re-check."""
    record_dir = os.environ.get("CUDAOPT_RECORD_DIR")
    if record_dir:
        from cudaopt.agent.records import record

        record(Path(record_dir), candidate, verdict)


def register(app: typer.Typer) -> None:
    @app.command("check")
    def check_cmd(
        model: Path = typer.Argument(..., help="task file (KernelBench format)"),
        candidate: Path = typer.Argument(..., help="candidate model_new.py"),
        device: str = DeviceOpt, json_path: str = JsonOpt, atol: float = AtolOpt,
        rtol: float = RtolOpt, trials: int = TrialsOpt, allow: list[str] = AllowOpt,
        timeout: float = TimeoutOpt, compile_mode: str = ModeOpt,
        time_budget: float = BudgetOpt,
        profile: bool = typer.Option(True, "--profile/--no-profile", help="time it too"),
        compile_baseline: bool = typer.Option(True, "--compile-baseline/--no-compile-baseline"),
        ceiling: float = typer.Option(10.0, "--ceiling", help="speedups above this are "
                                      "re-measured and flagged"),
        trace: bool = typer.Option(False, "--trace", help="print each step with its start "
                                   "time instead of a spinner (where does the time go?)"),
    ) -> None:
        """Build, verify and time CANDIDATE against MODEL. Exit 0 only if correct and clean;
        2 bad input, 3 build failure, 4 wrong result, 5 rule violation, 6 crash or timeout."""
        options = JudgeOptions(device=device, atol=atol, rtol=rtol, trials=trials, allow=allow,
                               timeout_s=timeout, compile_mode=compile_mode,
                               time_budget_s=time_budget, profile=profile,
                               compile_baseline=compile_baseline, ceiling=ceiling)
        _judge(model, candidate, options, json_path, trace)

    @app.command("serve")
    def serve_cmd(
        folder: Path = typer.Argument(Path("."), help="folder whose checks it serves"),
        device: str = DeviceOpt,
    ) -> None:
        """Keep a warm judge for FOLDER until Ctrl-C: `cudaopt check` / `verify` / `profile`
        on files under it reuse loaded workers and the compiled baseline instead of starting
        them each time."""
        from cudaopt.judge.serve import serve

        if not folder.is_dir():
            raise typer.BadParameter(f"{folder} is not a folder", param_hint="FOLDER")
        err = Console(stderr=True)
        # SIGTERM stops it as cleanly as Ctrl-C; SIGINT too when started in the background
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, signal.default_int_handler)

        def ready(socket_path: Path) -> None:
            err.print(f"warm judge for {folder.resolve()} ({socket_path}): checks of files "
                      "under it use it. Ctrl-C stops it.")

        try:
            serve(folder, JudgeOptions(device=device), ready)
        except KeyboardInterrupt:
            err.print("warm judge stopped")

    @app.command("verify")
    def verify_cmd(
        model: Path = typer.Argument(Path("model.py")),
        candidate: Path = typer.Argument(Path("model_new.py")),
        device: str = DeviceOpt, json_path: str = JsonOpt, atol: float = AtolOpt,
        rtol: float = RtolOpt, trials: int = TrialsOpt, timeout: float = TimeoutOpt,
    ) -> None:
        """Build and verify the workspace's model_new.py (no timing)."""
        options = JudgeOptions(device=device, atol=atol, rtol=rtol, trials=trials,
                               timeout_s=timeout, profile=False)
        _judge(model, candidate, options, json_path)

    @app.command("profile")
    def profile_cmd(
        model: Path = typer.Argument(Path("model.py")),
        candidate: Path = typer.Argument(Path("model_new.py")),
        device: str = DeviceOpt, json_path: str = JsonOpt, timeout: float = TimeoutOpt,
        compile_mode: str = ModeOpt, time_budget: float = BudgetOpt,
        ncu: bool = typer.Option(False, "--ncu", help="also run Nsight Compute on the "
                                 "candidate's kernels (occupancy, throughput, top stall)"),
    ) -> None:
        """Build, verify and time the workspace's model_new.py against eager and torch.compile:
        cold and warm figures, where the time goes, and the distance to the hardware's limit."""
        options = JudgeOptions(device=device, timeout_s=timeout, compile_mode=compile_mode,
                               time_budget_s=time_budget)
        _judge(model, candidate, options, json_path, ncu=ncu)
