"""A slot's device lock: the GPU's own host-wide lock (`judge.workers.devlock`), or for CPU slots,
which may judge side by side by choice, one per executor folder shared by everything
judging under it (a slot process and the episodes' own judges)."""

from __future__ import annotations

from pathlib import Path

from cudaopt.executor.base import SlotSpec
from cudaopt.judge import DeviceLock, gpu_lock


def device_lock(root: Path, slot: SlotSpec, gpu: str | None = None) -> DeviceLock:
    """The lock of `slot`'s device: for a GPU (`gpu`, its `gpu_identity`) one per host,
    else one shared by everything judging under `root`."""
    if gpu is None or slot.device != "cuda":
        return DeviceLock(root / "locks" / (slot.name.replace(":", "-").replace("/", "_")
                                            + ".lock"))
    return gpu_lock(gpu)
