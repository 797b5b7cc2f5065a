"""What a run is given (`RunConfig`, with its `Limits`) and what it carries from one session
to the next (`RunState`, kept in meta.json). One floor below the loop and the run's judge,
so the front ends, the loop and the judge service all read them without importing each
other."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cudaopt.judge import JudgeOptions, sandbox_off
from cudaopt.sandbox import Sandbox


@dataclass
class Limits:
    """When a run stops whatever the model does (the CLI takes them from the settings)."""

    max_steps: int = 40
    max_cost_usd: float = 10.0
    max_minutes: float = 60.0


@dataclass
class RunState:
    """What survives a restart (kept in meta.json): counters and what was already seen."""

    steps: int = 0
    cost_usd: float = 0.0  # spent by earlier sessions of this run
    wall_s: float = 0.0  # spent by earlier sessions of this run
    seen_records: list[int] = field(default_factory=list)
    gains: int = 0  # times the best improved
    gains_at_last_stop: int = 0
    usage: dict[str, Any] = field(default_factory=dict)  # billed by earlier sessions


@dataclass
class RunConfig:
    """What a run starts with, from the CLI, a bench job or a reward-service episode."""

    model: str
    device: str  # "cuda" or "cpu", already resolved
    backend: str = "cuda"  # the kernel language taught: "cuda" (C++ on the CPU) or "triton"
    api_base: str | None = None
    tools: bool | None = None  # None: ask litellm, probe unknown models
    limits: Limits = field(default_factory=Limits)
    judge: JudgeOptions | None = None  # None: JudgeOptions(device=device)
    bash_timeout_s: float = 600.0
    context_tokens: int | None = None  # the model's window where nothing else says; a cap
    run_dir: Path | None = None  # None: a fresh one beside the task
    stage_dir: Path | None = None  # where the loop judges; None: <run dir>/judging
    sandbox: Sandbox | None = None  # the agent's shell; None: unconfined (the CLI always sets one)
    gpu: int | None = None  # pin the shell and the judge to this GPU (a service's slot)
    judge_lock: Any = None  # shared by the runs timing on one device, so timings never overlap

    def judge_options(self) -> JudgeOptions:
        options = self.judge or JudgeOptions(device=self.device)
        return options if self.confined else sandbox_off(options)

    @property
    def confined(self) -> bool:
        """The run's sandbox confines the candidate's worker as it does the shell."""
        return self.sandbox is not None and self.sandbox.kind == "bwrap"
