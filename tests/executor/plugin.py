"""Job kinds for the executor's own tests: a slot process that dies mid-job, once."""

from __future__ import annotations

import os
from pathlib import Path

from cudaopt.executor.jobs import Job, JobResult
from cudaopt.executor.slot import SlotRunner, register


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
