"""Job kinds for the executor's own tests: a slot process that dies mid-job, once; a
judgement short of device memory, once, that says which other slot processes, and which judge
workers of theirs, were alive when it was judged again; a judgement that held a given amount
of device memory; a pause, which may leave its lane's pool holding a loaded task and a spare
candidate process."""

from __future__ import annotations

import os
import time
from pathlib import Path

from cudaopt.executor.jobs import Job, JobResult
from cudaopt.executor.slot import SlotRunner, register
from cudaopt.judge import JudgeOptions, check
from tests.procs import descendants, processes


def die_once(runner: SlotRunner, job: Job) -> JobResult:
    """Kills its own slot process the first time (a lost worker); answers the second."""
    mark = Path(job.params["mark"])
    if not mark.exists():
        mark.write_text("died")
        os._exit(9)
    return JobResult(job.id, extra={"pid": os.getpid()})


def always_die(runner: SlotRunner, job: Job) -> JobResult:
    os._exit(9)


register("die_once", die_once)
register("always_die", always_die)


def short_of_memory_once(runner: SlotRunner, job: Job) -> JobResult:
    """A CUDA judgement's verdict that ran out of device memory the first time; a correct
    one the second."""
    mark = Path(job.params["mark"])
    if not mark.exists():
        mark.write_text("out of memory")
        error = "candidate OutOfMemoryError: CUDA out of memory. Tried to allocate 6.00 GiB."
        return JobResult(job.id, verdict={"device": "cuda", "status": "crash",
                                          "correct": False, "error": error})
    return JobResult(job.id, verdict={"device": "cuda", "status": "ok", "correct": True},
                     extra={**_beside(runner), "pid": os.getpid()})


def _beside(runner: SlotRunner) -> dict[str, set[int]]:
    """The executor's other live slot processes (`siblings`) and the judge workers under
    them (`sibling_workers`)."""
    siblings = set(processes("-m cudaopt.executor ", f" {runner.root} ")) - {os.getpid()}
    workers = set(processes("-m cudaopt.judge.roles.worker ")) & descendants(siblings)
    return {"siblings": siblings, "sibling_workers": workers}


def pause(runner: SlotRunner, job: Job) -> JobResult:
    """Holds its lane for a while, as a judgement being prepared does; with `hold`, its
    lane's pool then holds what a judged lane's does: a task's loaded reference worker
    (`loaded`, a real judgement of a small CPU task) and a candidate process started ahead
    (`spare`)."""
    time.sleep(float(job.params["s"]))
    extra: dict = {"pid": os.getpid()}
    if job.params.get("hold"):
        folder = runner.root / "held"
        folder.mkdir(exist_ok=True)
        (folder / "model.py").write_text(_DOUBLE)
        (folder / "model_new.py").write_text(_DOUBLE.replace("class Model", "class ModelNew"))
        pool = runner.pool(job)
        options = JudgeOptions(device="cpu", trials=1, profile=False)
        verdict = check(folder / "model.py", folder / "model_new.py", options, pool=pool)
        reference, _ = pool.references(folder / "model.py", "cpu")
        extra.update(correct=verdict.correct, spare=set(pool.spares.pids()),
                     loaded={reference.worker.proc.pid} if reference else set())
    return JobResult(job.id, extra=extra)


_DOUBLE = """import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return x * 2


def get_inputs():
    return [torch.randn(64)]


def get_init_inputs():
    return []
"""


register("short_of_memory_once", short_of_memory_once)
register("pause", pause)


def held(runner: SlotRunner, job: Job) -> JobResult:
    """A CUDA judgement's verdict whose processes held `gib` of device memory at most; says
    which other slot processes, and judge workers of theirs, were alive while it ran."""
    time.sleep(float(job.params.get("s", 0.0)))
    return JobResult(job.id, verdict={"device": "cuda", "status": "ok", "correct": True,
                                      "device_memory_gib": float(job.params["gib"])},
                     extra=_beside(runner))


register("held", held)
