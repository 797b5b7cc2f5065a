"""One call that `bench` and the reward service use to get their executor: local slot
processes by default, a Ray cluster with `--ray`."""

from __future__ import annotations

from typing import Any

from cudaopt.executor.base import Executor
from cudaopt.executor.local import LocalExecutor


def make_executor(device: str, gpus: list[int] | None = None, *, ray: str | None = None,
                  workers: int | None = None, **options: Any) -> Executor:
    """`ray=None`: this machine's GPUs (`gpus`) or `workers` CPU slots. `ray="auto"` (or an
    address such as "ray://head:10001"): one slot per GPU of the Ray cluster, at most
    `workers`. `options` are the executors' shared settings (root, sandbox, plugins,
    job_timeout_s, max_attempts, build_workers)."""
    if not ray:
        return LocalExecutor(device, gpus, workers or 1, **options)
    if gpus:
        raise ValueError("--gpus picks GPUs of this machine; with --ray the cluster's GPUs "
                         "are used (set how many with --workers)")
    from cudaopt.executor.cluster import RayExecutor

    options.pop("build_workers", None)  # builds are Ray CPU tasks: Ray places them
    return RayExecutor(ray, device, slots=workers, **options)
