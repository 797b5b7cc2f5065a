"""`cudaopt check`, and `verify` / `profile` for use inside an agent workspace."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import typer
from rich.console import Console

from cudaopt.cli.common import (
    AllowOpt,
    AtolOpt,
    BudgetOpt,
    DeviceOpt,
    JsonOpt,
    ModeOpt,
    RtolOpt,
    TimeoutOpt,
    TrialsOpt,
    layered_options,
)
from cudaopt.judge import JudgeOptions, Progress, Verdict
from cudaopt.reports.verdict import render_verdict
from cudaopt.task import BadInput

SETTINGS_NOTE = ("Defaults of --device, --atol, --rtol, --trials, --allow, --timeout and "
                 "--compile-mode come from the settings (cudaopt.toml, CUDAOPT_*, ...): "
                 "`cudaopt config` shows them and where each is set.")
CeilingOpt = typer.Option(10.0, "--ceiling", metavar="X",
                          help="speedups above X are re-measured and flagged")
BaselineOpt = typer.Option(True, "--compile-baseline/--no-compile-baseline",
                           help="time torch.compile too (the target is 5% faster than it)")
IsolationOpt = typer.Option(
    None, "--isolation", metavar="MODE",
    help="required | optional | off: the candidate's worker in namespaces of its own; where "
         "the machine cannot isolate, 'required' awards no speed milestone "
         "[default: required, or the isolation setting]")
TraceOpt = typer.Option(False, "--trace", help="print each step with its start time instead "
                        "of a spinner (where does the time go?)")


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
    from cudaopt.judge import ncu_unavailable as unavailable
    from cudaopt.judge import resolve_device

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
    from cudaopt.judge import default_build_dir
    from cudaopt.judge import run_ncu as run

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
    """Through a warm judge when one answers: the agent run's (CUDAOPT_JUDGE_SOCKET), a
    `cudaopt serve` for a folder holding both files, else this machine's (started on
    demand, see `machine`); here, cold, when none can be had or CUDAOPT_WARM_JUDGE=0."""
    from cudaopt.judge import find_server

    socket_path = os.environ.get("CUDAOPT_JUDGE_SOCKET")
    found = None if socket_path else find_server(candidate.resolve().parent)
    if found and model.resolve().is_relative_to(found[1]):
        socket_path = str(found[0])
    if socket_path:
        from cudaopt.judge import remote_check

        verdict = remote_check(Path(socket_path), model, candidate, options, progress)
        if verdict is not None:
            if found:
                progress(f"judged by the warm judge `cudaopt serve` runs for {found[1]}")
            return verdict
    from cudaopt.judge import machine_check

    verdict = machine_check(model, candidate, options, progress)
    if verdict is not None:
        return verdict
    from cudaopt.judge import check  # imports torch: only when judging here

    return check(model, candidate, options, progress)


def _record(candidate: Path, verdict: Verdict) -> None:
    """Inside an agent run, leave a copy of what was judged for the loop to re-check."""
    record_dir = os.environ.get("CUDAOPT_RECORD_DIR")
    if record_dir:
        from cudaopt.agent.records import record

        record(Path(record_dir), candidate, verdict)


ModelArg = typer.Argument(..., metavar="MODEL", help="task file (KernelBench format)")
CandidateArg = typer.Argument(..., metavar="CANDIDATE", help="candidate model_new.py")
WorkspaceModel = typer.Argument(Path("model.py"), metavar="MODEL", help="task file")
WorkspaceCandidate = typer.Argument(Path("model_new.py"), metavar="CANDIDATE",
                                    help="candidate file")
EXITS = ("Exit 0 only if correct and clean; 2 bad input, 3 build failure, 4 wrong result, "
         "5 rule violation, 6 crash or timeout.")


CHECK_HELP = f"Build, verify and time CANDIDATE against MODEL.\n\n{EXITS}"
VERIFY_HELP = f"Build and verify a workspace's model_new.py (no timing).\n\n{EXITS}"
PROFILE_HELP = ("Build, verify and time a workspace's model_new.py.\n\nAgainst eager PyTorch "
                "and torch.compile: cold and warm figures, where the time goes, and the "
                f"distance to the hardware's limit.\n\n{EXITS}")


def register(app: typer.Typer) -> None:
    """Add `check`, `serve`, `verify` and `profile` to the `cudaopt` app."""
    app.command("check", epilog=SETTINGS_NOTE, help=CHECK_HELP)(check_cmd)
    app.command("serve")(serve_cmd)
    app.command("verify", epilog=SETTINGS_NOTE, help=VERIFY_HELP)(verify_cmd)
    app.command("profile", epilog=SETTINGS_NOTE, help=PROFILE_HELP)(profile_cmd)


def check_cmd(
    model: Path = ModelArg, candidate: Path = CandidateArg,
    device: str = DeviceOpt, json_path: str = JsonOpt, atol: float = AtolOpt,
    rtol: float = RtolOpt, trials: int = TrialsOpt, allow: list[str] = AllowOpt,
    timeout: float = TimeoutOpt, compile_mode: str = ModeOpt,
    time_budget: float = BudgetOpt,
    profile: bool = typer.Option(True, "--profile/--no-profile",
                                 help="time it against eager and torch.compile"),
    compile_baseline: bool = BaselineOpt, ceiling: float = CeilingOpt,
    trace: bool = TraceOpt, isolation: str | None = IsolationOpt,
) -> None:
    """Help: CHECK_HELP. The judge's flags over the settings, as `optimize` judges."""
    options = layered_options(model, device, atol, rtol, trials, allow, timeout, compile_mode,
                              time_budget_s=time_budget, profile=profile,
                              compile_baseline=compile_baseline, ceiling=ceiling)
    if isolation is not None:
        options.isolation = isolation
    _judge(model, candidate, options, json_path, trace)


def serve_cmd(
    folder: Path = typer.Argument(Path("."), metavar="FOLDER",
                                  help="folder whose checks it serves"),
    device: str = DeviceOpt,
) -> None:
    """Keep a warm judge for FOLDER until Ctrl-C.

    `cudaopt check`, `verify` and `profile` on files under FOLDER reuse its loaded
    workers and compiled baseline instead of starting them each time."""
    from cudaopt.judge import serve

    if not folder.is_dir():
        raise typer.BadParameter(f"{folder} is not a folder", param_hint="FOLDER")
    err = Console(stderr=True)
    # SIGTERM stops it as cleanly as Ctrl-C; SIGINT too when started in the background
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, signal.default_int_handler)

    def ready(socket_path: Path) -> None:
        err.print(f"warm judge for {folder.resolve()} ({socket_path}): checks of files "
                  "under it use it. Ctrl-C stops it.")

    options = layered_options(folder / "model.py", device, None, None, None, None, None, None)
    try:
        serve(folder, options, ready)
    except KeyboardInterrupt:
        err.print("warm judge stopped")


def verify_cmd(
    model: Path = WorkspaceModel, candidate: Path = WorkspaceCandidate,
    device: str = DeviceOpt, json_path: str = JsonOpt, atol: float = AtolOpt,
    rtol: float = RtolOpt, trials: int = TrialsOpt, allow: list[str] = AllowOpt,
    timeout: float = TimeoutOpt, trace: bool = TraceOpt,
) -> None:
    """Help: VERIFY_HELP. The agent's check inside its workspace: correctness, no timing."""
    options = layered_options(model, device, atol, rtol, trials, allow, timeout, None,
                              profile=False)
    _judge(model, candidate, options, json_path, trace)


def profile_cmd(
    model: Path = WorkspaceModel, candidate: Path = WorkspaceCandidate,
    device: str = DeviceOpt, json_path: str = JsonOpt, atol: float = AtolOpt,
    rtol: float = RtolOpt, trials: int = TrialsOpt, allow: list[str] = AllowOpt,
    timeout: float = TimeoutOpt, compile_mode: str = ModeOpt,
    time_budget: float = BudgetOpt, compile_baseline: bool = BaselineOpt,
    ceiling: float = CeilingOpt, trace: bool = TraceOpt,
    ncu: bool = typer.Option(False, "--ncu", help="also run Nsight Compute on the "
                             "candidate's kernels (occupancy, throughput, top stall)"),
) -> None:
    """Help: PROFILE_HELP. The agent's full measurement inside its workspace."""
    options = layered_options(model, device, atol, rtol, trials, allow, timeout, compile_mode,
                              time_budget_s=time_budget, compile_baseline=compile_baseline,
                              ceiling=ceiling)
    _judge(model, candidate, options, json_path, trace, ncu)
