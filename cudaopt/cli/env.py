"""`cudaopt env serve`: the judge and the agent's workspace as a reward service for RL."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console

from cudaopt.cli.common import (
    AllowOpt,
    AtolOpt,
    BudgetOpt,
    ModeOpt,
    RtolOpt,
    TimeoutOpt,
    TrialsOpt,
    layered_options,
    setting_opt,
)
from cudaopt.config import load_settings

if TYPE_CHECKING:  # the executor is imported where a step needs it: see `common`
    from cudaopt.executor import SlotSpec

env_app = typer.Typer(no_args_is_help=True, help="Serve cudaopt's judge as a reward "
                      "service for RL.\n\nTrain a kernel-writing policy against it in the "
                      "environment it will meet inside `cudaopt optimize`.")

GpusOpt = setting_opt("--gpus", "LIST", "GPU indices to serve, e.g. 0,1", "every visible GPU")
PortOpt = typer.Option(8765, "--port", metavar="PORT", help="TCP port (0: any free port)")
HostOpt = typer.Option("127.0.0.1", "--host", metavar="ADDRESS", help="address to bind; "
                       "other than 127.0.0.1 exposes the service to the network")
TokenOpt = setting_opt("--token-file", "PATH", "file holding the bearer token",
                       "a new one in ROOT/token")
EnvDeviceOpt = setting_opt("--device", "DEVICE", "cuda or cpu", "cuda when present, else cpu")
SandboxOpt = typer.Option("auto", "--sandbox", metavar="MODE", help="auto | bwrap | none: "
                          "episodes' shells and candidate workers, as in optimize")
RootOpt = setting_opt("--root", "DIR", "state folder: episodes (run directories), sources",
                      "~/.local/state/cudaopt/env")
EpisodesOpt = typer.Option(8, "--max-episodes", metavar="N", min=1, help="episodes at once")
StepsOpt = typer.Option(40, "--max-steps", metavar="N", min=1, help="steps per episode")
MinutesOpt = typer.Option(60.0, "--max-minutes", metavar="MINUTES",
                          help="wall time per episode")
ContextOpt = setting_opt("--context-tokens", "N", "the policy's context window: what an "
                         "episode sends past it is compacted", "the `context_tokens` setting, "
                         "else no compaction", min=1)
IdleOpt = typer.Option(600.0, "--idle", metavar="SECONDS", help="time without an action "
                       "before an episode is ended")
DiskOpt = typer.Option(2048, "--episode-disk-mb", metavar="MB", min=1, help="disk space an "
                       "episode's files may take before it is ended")
QueueOpt = typer.Option(64, "--queue-per-slot", metavar="N", min=1, help="candidates waiting "
                        "per slot before /verify answers busy")
WorkersOpt = typer.Option(1, "--workers", metavar="N", min=1, help="CPU slots (--device cpu; "
                          "timings on a shared CPU interfere)")
AttemptsOpt = typer.Option(2, "--attempts", metavar="N", min=1, help="tries of a candidate "
                           "whose slot process died, before it is an infrastructure error")
RayOpt = setting_opt("--ray", "ADDRESS", "judge /verify on a Ray cluster: auto (RAY_ADDRESS, "
                     "or `ray start` here) or ray://HEAD:10001; episodes stay on this machine")


def _default_root() -> Path:
    state = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
    return Path(state) / "cudaopt" / "env"


def _gpus(text: str | None) -> list[int] | None:
    if not text:
        return None
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise typer.BadParameter("--gpus takes GPU indices, e.g. 0,1") from None


@env_app.command("serve")
def serve_cmd(
    gpus: str = GpusOpt, port: int = PortOpt, host: str = HostOpt, token_file: Path = TokenOpt,
    device: str = EnvDeviceOpt, sandbox: str = SandboxOpt, root: Path = RootOpt,
    max_episodes: int = EpisodesOpt, max_steps: int = StepsOpt, max_minutes: float = MinutesOpt,
    context_tokens: int = ContextOpt, idle: float = IdleOpt, episode_disk_mb: int = DiskOpt,
    queue_per_slot: int = QueueOpt, workers: int = WorkersOpt, attempts: int = AttemptsOpt,
    trials: int = TrialsOpt, time_budget: float = BudgetOpt, atol: float = AtolOpt,
    rtol: float = RtolOpt, timeout: float = TimeoutOpt, compile_mode: str = ModeOpt,
    allow: list[str] = AllowOpt, ray: str = RayOpt,
) -> None:
    """Serve /verify, /reset, /step, /state and /health until Ctrl-C."""
    from cudaopt.env.options import ServiceOptions
    from cudaopt.env.service import EnvService, build_executor, load_token
    from cudaopt.judge import resolve_device
    from cudaopt.sandbox import SandboxUnavailable
    from cudaopt.task import BadInput

    console = Console(stderr=True)
    try:
        device = device if ray and device else resolve_device(device)
        judge = layered_options(Path.cwd() / "cudaopt.toml", device, atol, rtol, trials, allow,
                                timeout, compile_mode, time_budget_s=time_budget)
        if context_tokens is None:  # the layers (`context_tokens`), as optimize reads them
            context_tokens = load_settings(Path.cwd()).context_tokens
        options = ServiceOptions(
            root=(root or _default_root()).resolve(), judge=judge, sandbox=sandbox, host=host,
            port=port, max_episodes=max_episodes, max_steps=max_steps,
            episode_minutes=max_minutes, context_tokens=context_tokens, idle_s=idle,
            episode_disk_mb=episode_disk_mb, queue_per_slot=queue_per_slot)
        token, token_path = load_token(token_file, options.root)
        executor = build_executor(options, device, _gpus(gpus), max_attempts=attempts,
                                  workers=workers, ray=ray)
        episode_slots = _local_slots(device, workers) if ray else None
    except (BadInput, SandboxUnavailable, ValueError, OSError, ImportError, RuntimeError,
            ConnectionError) as exc:
        console.print(f"error: {exc}", markup=False)
        raise typer.Exit(2) from None
    try:
        service = EnvService(options, executor, token, episode_slots)
    except (SandboxUnavailable, ValueError, OSError) as exc:
        executor.close()
        console.print(f"error: {exc}", markup=False)
        raise typer.Exit(2) from None
    _announce(console, service, token_path, sandbox)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        service.serve_forever()
    except KeyboardInterrupt:
        console.print("stopping: episodes still running are lost")
    finally:
        service.close()


def _local_slots(device: str, workers: int) -> list[SlotSpec]:
    """This machine's own slots, for episodes when /verify runs on a cluster; none when it
    has no device of that kind (episodes are then refused with a reason)."""
    from cudaopt.executor.base import slot_specs

    try:
        return slot_specs(device, None, workers)
    except ValueError:
        return []


def _announce(console: Console, service, token_path: Path, sandbox: str) -> None:  # noqa: ANN001
    lost = service.episodes.lost
    console.print(f"cudaopt env: listening on {service.url}  slots: "
                  f"{', '.join(s.name for s in service.executor.slots)}  token: {token_path}"
                  + (f"  ({lost} episodes lost in the last stop)" if lost else ""),
                  markup=False, highlight=False, soft_wrap=True)
    if sandbox == "none":
        from cudaopt.sandbox import NONE_WARNING

        console.print(NONE_WARNING, style="yellow", markup=False, highlight=False)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def register(app: typer.Typer) -> None:
    app.add_typer(env_app, name="env")
