"""What a run keeps in its meta.json: counters and the best so far after every step (so an
interrupted run shows where it was, and `--resume` continues the count), and the outcome
once the final check has spoken."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from pathlib import Path

from cudaopt.agent.loop import Agent
from cudaopt.judge import Verdict
from cudaopt.runs.folder import RunMeta, write_meta


def finish(run_dir: Path, meta: RunMeta, reason: str, final: Verdict | None) -> None:
    if reason == "interrupted":
        meta.status = "interrupted"
    elif final is not None and final.accepted:
        meta.status = "accepted"
    else:
        meta.status = "failed" if reason in ("model_error", "crashed") else "not_accepted"
    if final is not None:
        meta.best_speedup_vs_compile = final.speedup_vs_compile
        meta.best_speedup_vs_eager = final.speedup_vs_eager
        meta.gpu = final.device_name or meta.gpu
    meta.finished = datetime.now().isoformat(timespec="seconds")
    write_meta(run_dir, meta)


def save(run_dir: Path, meta: RunMeta, agent: Agent) -> None:
    """Counters and the best so far, after every step."""
    tracker = agent.tracker
    meta.steps = agent.progress.steps
    meta.cost_usd = agent.cost_usd
    meta.wall_s = agent.wall_s
    if tracker.best is not None:
        meta.best_speedup_vs_compile = tracker.best.speedup_vs_compile
        meta.best_speedup_vs_eager = tracker.best.speedup_vs_eager
    saved = asdict(agent.progress)
    usage = agent.asker.usage.to_json()
    saved.update(cost_usd=meta.cost_usd, wall_s=meta.wall_s, usage=usage)
    meta.extra["progress"] = saved
    meta.extra["usage"] = usage
    meta.extra["context"] = agent.asker.context.budget.to_json()  # a refusal may teach it
    write_meta(run_dir, meta)
