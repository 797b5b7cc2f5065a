"""One call that `bench` and the reward service use to get their executor: local slot
processes by default, a Ray cluster with `--ray`."""

from __future__ import annotations

from typing import Any

from cudaopt.executor.base import Executor
from cudaopt.executor.local import LocalExecutor


def make_executor(device: str, gpus: list[int] | None = None, *, ray: str | None = None,
                  workers: int | None = None, **options: Any) -> Executor:
    """`ray=None`: this machine's GPUs (`gpus`, default all) or `workers` CPU slots.
    `ray="auto"` (or an address such as "ray://head:10001"): one slot per GPU of the Ray
    cluster (`slots=N` caps them), or with `device="cpu"`, `workers` slots (default: one per
    declared GPU, else per node). `options` are the settings both executors take (sandbox,
    plugins, job_timeout_s, max_attempts, and locally root, build_workers and
    lookahead)."""
    if not ray:
        return LocalExecutor(device, gpus, workers or 1, **options)
    if gpus:
        raise ValueError("--gpus picks GPUs of this machine; with --ray every GPU of the "
                         "cluster is used")
    if options.get("lookahead") is not None:
        raise ValueError("--lookahead sets this machine's slots; a Ray cluster's slots "
                         "prepare one job ahead each")
    from cudaopt.executor.cluster import RayExecutor

    # Builds are Ray CPU tasks, placed by Ray; a folder on this machine is not on the
    # other nodes, which work in their own temporary folder.
    options.pop("build_workers", None)
    options.pop("root", None)
    slots = options.pop("slots", None) or (workers if device == "cpu" else None)
    return RayExecutor(ray, device, slots=slots, **options)
