"""Settings of one judgement; plain data so the CLI, the agent and tests share one shape.

Also the device those settings name, resolved (`resolve_device`): every front end asks it
before anything starts, so a missing GPU is one clear error, not a worker's crash.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from cudaopt.task import BadInput

ISOLATION_ENV = "CUDAOPT_ISOLATION"
ISOLATION_MODES = ("required", "optional", "off")

#: What a judgement says of each step as it starts it (a spinner, a trace, a socket line).
Progress = Callable[[str], None]


@dataclass
class JudgeOptions:
    """How to judge a candidate.

    `device=None` picks CUDA when a GPU is present, else CPU. `seed=None` draws a secret
    seed per run, which is the only safe choice outside tests: a known seed lets a
    candidate precompute its answers.
    """

    device: str | None = None
    atol: float = 1e-2
    rtol: float = 1e-2
    trials: int = 5  # on fresh draws from get_inputs()
    derived_trials: int = 3  # then on inputs of other structure derived from them (variants)
    allow: list[str] = field(default_factory=list)  # extra aten ops the candidate may run
    timeout_s: float = 120.0  # per worker step (import + build, one trial, one timing round)
    build_timeout_s: float = 600.0
    compile_mode: str = "default"
    time_budget_s: float = 10.0  # timing stops once the spread is small or this is spent
    min_rounds: int = 5
    max_rounds: int = 30
    target_spread: float = 0.02  # relative half-IQR of per-round speedup ratios
    margin: float = 0.05  # "faster" means faster by this much beyond the noise
    ceiling: float = 10.0  # speedups above this are re-measured and flagged
    profile: bool = True  # False: build + verify only
    # the profiled burst: per-kernel breakdown, summed kernel time, roofline (informative,
    # not part of the reward; a bench or a reward service that reads none of it skips it)
    breakdown: bool = True
    compile_baseline: bool = True
    seed: int | None = None
    build_dir: Path | None = None
    threads: int | None = None  # CPU: torch threads for baselines and candidate alike
    cache_dir: Path | None = None  # torch.compile / load_inline caches; default user cache
    # the candidate's worker in namespaces of its own (see `isolation`): "required" (no
    # speed milestone where the machine cannot isolate), "optional" (speed milestones
    # there too, the verdict saying so), "off" (never isolated, as inside a run whose own
    # sandbox is off); `CUDAOPT_ISOLATION` sets the default
    isolation: str = field(default_factory=lambda: os.environ.get(ISOLATION_ENV, "required"))


def sandbox_off(options: JudgeOptions) -> JudgeOptions:
    """The options of a front end whose user turned its sandbox off (`--sandbox none`):
    the judge still isolates the candidate where it can, and where it cannot, speed
    milestones stand (the verdict says so), as the user chose to trust this code."""
    from dataclasses import replace

    return replace(options, isolation="optional") if options.isolation == "required" else options


def resolve_device(requested: str | None) -> str:
    import torch

    if requested in (None, "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested == "cuda" and not torch.cuda.is_available():
        raise BadInput("--device cuda was asked for, but no CUDA device is available "
                       "(check nvidia-smi and that torch is a CUDA build), or use --device cpu")
    if requested not in ("cuda", "cpu"):
        raise BadInput(f"unknown device {requested!r}: use cuda or cpu")
    return requested
