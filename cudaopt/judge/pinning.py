"""The baseline and the candidate timed from the same CPU (CUDA).

When a model runs many small operators, a GPU call's time is mostly the host launching
kernels, and how fast a process launches depends on the CPU it runs on: on the H200 the
same ResNet18 timed 2.1 ms per call in one worker process and 3.9 ms in another, and which
one was slow changed while they ran (the scheduler moves them). The baseline and candidate
workers never run at once during the timing, so their timing threads are pinned to one and
the same CPU for it, one local to the GPU where the system says which, and given back their
CPUs afterwards. (On CPU the workers need all their threads: nothing is pinned there, and
the noise check speaks for the machine's load.)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch


def _parse(cpulist: str) -> set[int]:
    """'0-3,8,10-11' -> {0, 1, 2, 3, 8, 10, 11}"""
    cpus: set[int] = set()
    for part in cpulist.strip().split(","):
        if "-" in part:
            low, high = part.split("-")
            cpus.update(range(int(low), int(high) + 1))
        elif part:
            cpus.add(int(part))
    return cpus


def choose(device: torch.device) -> int:
    """One CPU this process may use, near the GPU if sysfs says which are; GPUs of one host
    get different ones, so judges running side by side do not share a CPU."""
    allowed = sorted(os.sched_getaffinity(0))
    props = torch.cuda.get_device_properties(device)
    bus = getattr(props, "pci_bus_id", 0)
    path = Path(f"/sys/bus/pci/devices/{getattr(props, 'pci_domain_id', 0):04x}:{bus:02x}:"
                f"{getattr(props, 'pci_device_id', 0):02x}.0/local_cpulist")
    try:
        near = [c for c in allowed if c in _parse(path.read_text())]
    except (OSError, ValueError):
        near = []
    cpus = near or allowed
    return cpus[-1 - bus % len(cpus)]


def handle(cmd: dict[str, Any], device: torch.device) -> dict[str, Any]:
    """A worker's `pin` step: pin this (the timing) thread to `cpu` (chosen here when None),
    or give it back the CPUs in `restore`. Replies the CPU and the CPUs it had."""
    before = sorted(os.sched_getaffinity(0))
    if cmd.get("restore"):
        os.sched_setaffinity(0, cmd["restore"])
        return {"cpu": None, "before": before}
    cpu = cmd.get("cpu")
    cpu = choose(device) if cpu is None else cpu
    try:
        os.sched_setaffinity(0, {cpu})
    except OSError as exc:  # not allowed here (a container's cpuset): time unpinned
        return {"cpu": None, "before": before, "error": str(exc)}
    return {"cpu": cpu, "before": before}
