"""`cudaopt env serve`: the judge and the agent's workspace as a reward service for RL."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import typer
from rich.console import Console

from cudaopt.cli_judge import (
    AllowOpt,
    AtolOpt,
    BudgetOpt,
    ModeOpt,
    RtolOpt,
    TimeoutOpt,
    TrialsOpt,
    layered_options,
)
from cudaopt.executor import SlotSpec
from cudaopt.executor.local import slot_specs

env_app = typer.Typer(help="The reward service: train a kernel-writing policy against "
                      "cudaopt's judge.", no_args_is_help=True)


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
    gpus: str = typer.Option(None, "--gpus", help="GPU indices to serve, e.g. 0,1 "
                             "(default: every visible GPU)"),
    port: int = typer.Option(8765, "--port", help="TCP port (0: any free port)"),
    host: str = typer.Option("127.0.0.1", "--host", help="address to bind; other than "
                             "127.0.0.1 exposes the service to the network"),
    token_file: Path = typer.Option(None, "--token-file", help="file holding the bearer "
                                    "token (default: a new one in ROOT/token)"),
    device: str = typer.Option(None, "--device", help="cuda or cpu (default: cuda when "
                               "present)"),
    sandbox: str = typer.Option("auto", "--sandbox", help="auto | bwrap | none: episodes' "
                                "shells and candidate workers, as in optimize"),
    root: Path = typer.Option(None, "--root", help="state folder: episodes (run "
                              "directories), sources (default: ~/.local/state/cudaopt/env)"),
    max_episodes: int = typer.Option(8, "--max-episodes", min=1, help="episodes at once"),
    max_steps: int = typer.Option(40, "--max-steps", min=1, help="steps per episode"),
    max_minutes: float = typer.Option(60.0, "--max-minutes", help="wall time per episode"),
    context_tokens: int = typer.Option(None, "--context-tokens", min=1, help="the policy's "
                                       "context window: what an episode sends past it is "
                                       "compacted (default: no compaction)"),
    idle: float = typer.Option(600.0, "--idle", help="seconds without an action before an "
                               "episode is ended"),
    episode_disk_mb: int = typer.Option(2048, "--episode-disk-mb", min=1),
    queue_per_slot: int = typer.Option(64, "--queue-per-slot", min=1, help="candidates "
                                       "waiting per slot before /verify answers busy"),
    workers: int = typer.Option(1, "--workers", min=1, help="CPU slots (--device cpu; "
                                "timings on a shared CPU interfere)"),
    attempts: int = typer.Option(2, "--attempts", min=1, help="tries of a candidate whose "
                                 "slot process died, before it is an infrastructure error"),
    trials: int = TrialsOpt,
    time_budget: float = BudgetOpt,
    atol: float = AtolOpt,
    rtol: float = RtolOpt,
    timeout: float = TimeoutOpt,
    compile_mode: str = ModeOpt,
    allow: list[str] = AllowOpt,
    ray: str = typer.Option(None, "--ray", metavar="ADDRESS", help="judge /verify on a Ray "
                            "cluster: auto (RAY_ADDRESS, or `ray start` here) or "
                            "ray://HEAD:10001; episodes stay on this machine"),
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
