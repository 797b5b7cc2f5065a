"""The executor job kind "agent": one whole `optimize` loop on one task, holding one slot for
the run (its own warm judge inside), never committing. The slot processes import this module
(`LocalExecutor(plugins=("cudaopt.bench.agent_job",))`). A run interrupted mid-way (a killed
bench) is resumed from its run folder; a finished one that is run again (`--retry-failed`)
is kept beside the new one as `<task>.previous-N`."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from cudaopt.agent.config import Limits, RunConfig
from cudaopt.agent.run import RunResult, resume_run, start_run
from cudaopt.executor.jobs import Job, JobResult
from cudaopt.executor.slot import SlotRunner, register
from cudaopt.runs.folder import read_meta
from cudaopt.sandbox import resolve_sandbox

PLUGIN = __name__
RESUMABLE = ("running", "interrupted")


def agent_job(runner: SlotRunner, job: Job) -> JobResult:
    params = job.params
    run_dir = Path(params["run_dir"])
    judge = replace(job.options, device=job.options.device or runner.spec.device)
    limits = Limits(params["max_steps"], params["max_cost"], params["max_minutes"])
    sandbox = resolve_sandbox(params.get("sandbox", "auto"))
    status = read_meta(run_dir).status if (run_dir / "meta.json").is_file() else None
    if status in RESUMABLE:
        result = resume_run(run_dir, limits=limits, judge=judge,
                            api_base=params.get("api_base"), sandbox=sandbox)
    else:
        if status is not None:
            run_dir.rename(_aside(run_dir))
        task, _ = job.sources.materialize(runner.root)
        config = RunConfig(model=params["model"], device=runner.spec.device,
                           backend=params.get("backend", "cuda"),
                           api_base=params.get("api_base"), tools=params.get("tools"),
                           limits=limits, judge=judge, run_dir=run_dir, sandbox=sandbox,
                           bash_timeout_s=params.get("bash_timeout_s", 600.0))
        result = start_run(task, config)
    if result.reason == "model_error":
        error = result.meta.extra.get("error", "the model endpoint failed")
        return JobResult(job.id, infra_error=f"model endpoint failed: {error}",
                         extra=_extra(result.run_dir, result))
    return _result(job, result.run_dir, result)


def _result(job: Job, run_dir: Path, result: RunResult) -> JobResult:
    final = result.final
    return JobResult(job.id, verdict=final.to_json() if final else None,
                     device_name=final.device_name if final else "",
                     torch_version=final.torch_version if final else "",
                     extra=_extra(run_dir, result))


def _extra(run_dir: Path, result: RunResult) -> dict[str, Any]:
    return {"steps": result.meta.steps, "cost_usd": result.meta.cost_usd,
            "run_dir": str(run_dir), "stop_reason": result.reason}


def _aside(run_dir: Path) -> Path:
    n = 1
    while run_dir.with_name(f"{run_dir.name}.previous-{n}").exists():
        n += 1
    return run_dir.with_name(f"{run_dir.name}.previous-{n}")


register("agent", agent_job)
