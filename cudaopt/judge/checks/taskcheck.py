"""`check_task`: the task alone, loaded and run once on the device, before any candidate.

An agent run on a task the judge cannot use spends a model budget for nothing; this runs
the first half of every judgement (a reference worker loads the task and calls `Model`
once on fresh inputs) so such a task fails in seconds, with the judge's own message.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from cudaopt.judge.building.caches import worker_env
from cudaopt.judge.verdict.options import JudgeOptions, resolve_device
from cudaopt.judge.verdict.verdict import Status, Verdict
from cudaopt.judge.workers.child import WorkerFailure
from cudaopt.judge.workers.pool import JudgePool
from cudaopt.task import BadInput, validate_task


def check_task(task: Path, options: JudgeOptions | None = None) -> Verdict:
    """A verdict on the task itself: `Status.OK` (with the device's name) or `BAD_INPUT`."""
    options = options or JudgeOptions()
    verdict = Verdict()
    try:
        validate_task(task)
        verdict.device = resolve_device(options.device)
    except BadInput as exc:
        verdict.status, verdict.error = Status.BAD_INPUT, str(exc)
        return verdict
    pool = JudgePool(worker_env(options), keep_warm=False)
    worker = pool.new_reference("reference")
    try:
        info = worker.call("load", options.timeout_s, task=str(task.resolve()),
                           device=verdict.device, init_seed=pool.init_seed,
                           state_path=str(pool.scratch / "state_dict.pt"))
        verdict.device_name, verdict.torch_version = info["device_name"], info["torch_version"]
        worker.call("warm", options.timeout_s, seed=secrets.randbelow(2**62) + 1)
    except WorkerFailure as exc:
        verdict.status = Status.BAD_INPUT
        verdict.error = f"the task {task} failed to run on {verdict.device}:\n{exc}"
    finally:
        worker.close()
        pool.close()
    return verdict
