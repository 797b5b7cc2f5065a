"""A job kind for the Ray executor's tests: a nap that leaves a mark saying where it ran."""

from __future__ import annotations

import os
import time
from pathlib import Path

import ray

from cudaopt.executor.jobs import Job, JobResult
from cudaopt.executor.slot import SlotRunner, register


def nap(runner: SlotRunner, job: Job) -> JobResult:
    node = ray.get_runtime_context().get_node_id() if ray.is_initialized() else "local"
    marks = Path(job.params["marks"])
    (marks / f"{job.id}@{node}@{os.getpid()}").write_text("")
    time.sleep(job.params.get("s", 0.0))
    return JobResult(job.id, extra={"ran_on": node})


register("nap", nap)
