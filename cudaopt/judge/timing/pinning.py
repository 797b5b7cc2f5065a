"""The baseline and the candidate timed from the same CPU (CUDA).

When a model runs many small operators, a GPU call's time is mostly the host launching
kernels, and how fast a process launches depends on the CPU it runs on: on the H200 the
same ResNet18 timed 2.1 ms per call in one worker process and 3.9 ms in another, and which
one was slow changed while they ran (the scheduler moves them). The baseline and candidate
workers never run at once during the timing, so their timing threads are pinned to one and
the same CPU for it, one local to the GPU where the system says which, and given back their
CPUs afterwards. (On CPU the workers need all their threads: nothing is pinned there, and
the noise check speaks for the machine's load.)

Judges side by side (a bench on two GPUs, two `cudaopt check`s) must not time from one CPU:
two timing threads sharing it made figures scatter by up to ±200% on a 2-GPU H200 host and
failed an honest candidate's clock cross-check. A CPU is claimed for the timing with an
advisory lock that every judge on the host sees (`claim`); an executor reserves one per GPU
slot for its whole life and keeps all its other processes off those CPUs (`RESERVED_ENV`).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import IO, Any

import torch

from cudaopt.judge.workers.devlock import shared_dir

#: Set by an executor in a slot's environment: the CPU reserved for that slot's timing.
TIMING_CPU_ENV = "CUDAOPT_TIMING_CPU"
#: Every CPU an executor reserved for timing; its other processes stay off them.
RESERVED_ENV = "CUDAOPT_RESERVED_CPUS"
_held: dict[int, IO[bytes]] = {}  # CPUs this process has claimed, and their lock files


def claim(cpu: int) -> bool:
    """Claim `cpu` for timing until `release` (or this process's end); False when another
    process holds it (or the claim cannot be made)."""
    if cpu in _held:
        return True
    path = shared_dir("cudaopt-timing-cpus") / f"cpu{cpu}.lock"
    try:
        lock = path.open("ab")
    except OSError:
        return False
    try:
        path.chmod(0o666)  # other users' judges open it too
    except OSError:
        pass  # theirs already
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        lock.close()
        return False
    _held[cpu] = lock
    return True


def release(cpu: int) -> None:
    lock = _held.pop(cpu, None)
    if lock is not None:
        lock.close()  # closing drops the lock


def near_cpus(device: torch.device | int) -> list[int]:
    """The CPUs this process may use, those local to the GPU (per sysfs) first, each group
    in a per-GPU rotated order so GPUs of one host start their search at different CPUs."""
    allowed = sorted(os.sched_getaffinity(0))
    props = torch.cuda.get_device_properties(device)
    bus = getattr(props, "pci_bus_id", 0)
    path = Path(f"/sys/bus/pci/devices/{getattr(props, 'pci_domain_id', 0):04x}:{bus:02x}:"
                f"{getattr(props, 'pci_device_id', 0):02x}.0/local_cpulist")
    try:
        local = _parse(path.read_text())
    except (OSError, ValueError):
        local = set()
    order = []
    for group in ([c for c in allowed if c in local], [c for c in allowed if c not in local]):
        group = group[::-1]  # the highest-numbered first: CPU 0 takes most interrupts
        shift = bus % len(group) if group else 0
        order += group[shift:] + group[:shift]
    return order


def reserve(devices: list[int]) -> list[int]:
    """One claimed CPU per device (in order), for an executor's slots; held until this
    process ends. Fewer when the host has too few free CPUs to spare them."""
    reserved: list[int] = []
    spare = len(os.sched_getaffinity(0)) - len(devices)
    for device in devices:
        if spare < 1:
            break
        cpu = next((c for c in near_cpus(device) if c not in reserved and claim(c)), None)
        if cpu is not None:
            reserved.append(cpu)
    return reserved


def avoid(reserved: set[int] | None = None) -> None:
    """Keep this thread (and what it starts from now on) off the CPUs reserved for timing:
    `reserved`, else those named in the environment by an executor."""
    if reserved is None:
        reserved = _parse(os.environ.get(RESERVED_ENV, ""))
    rest = set(os.sched_getaffinity(0)) - reserved
    if reserved and rest:
        os.sched_setaffinity(0, rest)


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
    """The slot's reserved CPU under an executor; else the first unclaimed CPU near the GPU,
    claimed until `handle` restores (every CPU claimed: the first, shared)."""
    if os.environ.get(TIMING_CPU_ENV):
        return int(os.environ[TIMING_CPU_ENV])
    cpus = near_cpus(device)
    return next((c for c in cpus if claim(c)), cpus[0])


def handle(cmd: dict[str, Any], device: torch.device) -> dict[str, Any]:
    """A worker's `pin` step: pin this (the timing) thread to `cpu` (chosen here when None),
    or give it back the CPUs in `restore`. Replies the CPU and the CPUs it had."""
    before = sorted(os.sched_getaffinity(0))
    if cmd.get("restore"):
        os.sched_setaffinity(0, cmd["restore"])
        for held in list(_held):
            release(held)
        return {"cpu": None, "before": before}
    cpu = cmd.get("cpu")
    cpu = choose(device) if cpu is None else cpu
    try:
        os.sched_setaffinity(0, {cpu})
    except OSError as exc:  # not allowed here (a container's cpuset): time unpinned
        release(cpu)
        return {"cpu": None, "before": before, "error": str(exc)}
    return {"cpu": cpu, "before": before}
