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


def slot_specs(device: str, gpus: list[int] | None, workers: int) -> list[SlotSpec]:
    """This machine's slots: one per GPU in `gpus` (default: every visible GPU), or
    `workers` CPU slots."""
    if device == "cpu":
        return [SlotSpec(f"cpu:{i}", "cpu") for i in range(max(1, workers))]
    if gpus is None:
        import torch

        gpus = list(range(torch.cuda.device_count()))
    if not gpus:
        raise ValueError("no CUDA device is visible: pass --device cpu, or check nvidia-smi")
    return [SlotSpec(f"cuda:{gpu}", "cuda", gpu) for gpu in gpus]


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
