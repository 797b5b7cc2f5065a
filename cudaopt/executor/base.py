"""The executor protocol: what `bench` and the reward service need from any executor."""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass
from typing import Protocol

from cudaopt.executor.jobs import Job, JobResult


@dataclass(frozen=True)
class SlotSpec:
    """One place that judges one thing at a time: a GPU (`gpu` is its local index) or a CPU
    worker (`gpu` is None). A GPU never times two jobs at once, so one slot per GPU."""

    name: str  # e.g. "cuda:0", "cpu:1", "node-3/cuda:1"
    device: str  # "cuda" | "cpu"
    gpu: int | None = None


class Executor(Protocol):
    """Runs jobs on slots. `submit` never blocks on the job; the future always resolves to a
    `JobResult` (an infrastructure failure is `infra_error`, never an exception), so a
    crashed or hung job costs only itself."""

    @property
    def slots(self) -> list[SlotSpec]: ...

    def submit(self, job: Job) -> Future[JobResult]: ...

    def close(self, wait: bool = True) -> None:
        """Stop every slot; jobs not yet started resolve with an infrastructure error.
        Running jobs finish first (`wait=True`), or are stopped now and resolve with an
        infrastructure error (`wait=False`: an interrupted driver)."""
        ...
