"""A task's warm reference and baseline processes, handed from one judge process to another.

Every tool that judges keeps a pool of workers, but a pool dies with its process: the next
`cudaopt bench`, `optimize` or `env serve` of the same task paid 10-20 s again (an H200
host) for processes importing torch and torch.compile and loading the task. A pool with a
`Lender` (the machine's warm judge, `serving.machine`) gives its loaded pair away when it
moves to another task or closes, and asks for one before it starts its own.

Only the two trusted processes ever travel: neither imports candidate code, and a pool
still starts every candidate process itself. A handover moves ownership: the giver sends
the pipes, the log and a pidfd over a Unix socket (SCM_RIGHTS) and closes its own ends, so
the process is never driven by two judges, and dies (its commands pipe closed) if the one
holding it dies. The weights the candidate loads travel as a file whose digest the
reference took from the bytes it wrote, before any candidate could touch the copy.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from cudaopt.judge.workers.adopted import Adopted
from cudaopt.judge.workers.child import Worker, WorkerFailure
from cudaopt.judge.workers.scheduling import departure

#: The weights' file in a pool's scratch folder, where its candidates load them from.
STATE_NAME = "state_dict.pt"


@dataclass
class Loaded:
    """A reference worker that has loaded one task and answered every message sent to it."""

    worker: Worker
    info: dict  # the load reply: device name, torch version, the weights' digest
    compiled: str | None = None  # torch.compile mode it holds, if any
    owed: list[float] = field(default_factory=list)  # timeouts of replies not yet read
    device_gib: float = 0.0  # device memory it last held: what a lender pays to keep it


@dataclass
class Lease:
    """A task's loaded reference (and baseline) with what a pool needs to judge with them:
    the seed their weights were drawn from, the weights' file, the baselines' breakdowns."""

    key: str
    reference: Loaded
    baseline: Loaded | None
    init_seed: int
    state: Path  # the weights the candidate loads (`info["state_sha256"]` is their digest)
    breakdowns: dict[str, Any] = field(default_factory=dict)

    @property
    def device_gib(self) -> float:
        return sum(held.device_gib for held in self.loaded)

    @property
    def loaded(self) -> list[Loaded]:
        return [self.reference] + ([self.baseline] if self.baseline is not None else [])

    def sound(self) -> bool:
        return self.flaw() is None

    def flaw(self) -> str | None:
        """Why the lease cannot be lent, or None: each process alive and not scheduled below
        the judge (`untouched`), every owed reply accounted for, the weights' digest known.
        Said in the warm judge's log, where a pair that was not lent is looked into."""
        for name, held in zip(("reference", "baseline"), self.loaded, strict=False):
            worker = held.worker
            touched = how_touched(worker)
            if touched:
                return f"its {name} process {touched}"
            if worker.pending != len(held.owed):
                return (f"its {name} process owes {worker.pending} replies, "
                        f"{len(held.owed)} accounted for")
        if not isinstance(self.reference.info.get("state_sha256"), str):
            return "its weights' digest is unknown"
        return None

    def measure(self, timeout_s: float) -> bool:
        """Read each process's device memory now, as the pair is given away; False where one
        did not say. A lender bounds what it keeps by these figures, and one taken after an
        earlier step would miss what a later step drew (a reference kept after the stream
        check held 18.8 GiB under the figure verification had left). Each process must owe
        no reply: one in flight would be read as the answer."""
        for held in self.loaded:
            try:
                found = held.worker.call("trim", timeout_s).get("memory_gib")
            except WorkerFailure:
                return False
            if not (isinstance(found, list) and len(found) == 3):
                return False
            held.device_gib = float(found[1])
        return True

    def close(self) -> None:
        for held in self.loaded:
            held.worker.close()


class Lender(Protocol):
    """Keeps leases between the pools that give and borrow them."""

    def borrow(self, key: str) -> Lease | None: ...

    def give(self, lease: Lease) -> None: ...


def borrow(lender: Lender | None, key: str, scratch: Path) -> Lease | None:
    """The lender's lease for `key`, its weights copied into `scratch`, where the borrowing
    pool's candidates load them; None where there is none, or the copy failed."""
    lease = lender.borrow(key) if lender is not None else None
    if lease is None:
        return None
    try:
        shutil.copyfile(lease.state, scratch / STATE_NAME)
    except OSError:
        lease.close()
        return None
    return lease


def lease_key(env: dict[str, str], task_digest: str, device: str, threads: int | None) -> str:
    """What a loaded pair is bound to: its environment (caches, visible GPU, the GPU's turn
    lock), the task's content, the device and, on a CPU, the intra-op threads every worker
    of a judgement must share."""
    text = json.dumps([sorted(env.items()), task_digest, device, threads])
    return hashlib.sha256(text.encode()).hexdigest()


def keep_state(lease: Lease, folder: Path) -> bool:
    """Copy the lease's weights into `folder` (the lender's own), checked against the digest
    the reference took as it wrote them: the giver's copy sat where its candidates could
    write. False, and nothing kept, where they no longer match."""
    target = folder / f"{lease.key}-{lease.init_seed}.pt"  # same key and seed: same weights
    h = hashlib.sha256()
    try:
        with open(lease.state, "rb") as source, open(target, "wb") as copy:
            for chunk in iter(lambda: source.read(1 << 22), b""):
                h.update(chunk)  # the bytes as kept, in the one pass that copies them
                copy.write(chunk)
        if h.hexdigest() == lease.reference.info["state_sha256"]:
            lease.state = target
            return True
    except (OSError, KeyError):
        pass
    target.unlink(missing_ok=True)
    return False


def to_wire(lease: Lease) -> tuple[dict[str, Any], list[int]]:
    """The lease as a JSON-able message and the descriptors that go with it: per worker its
    command pipe, reply pipe, log and a pidfd."""
    workers, fds = [], []
    for held in lease.loaded:
        worker = held.worker
        fds += [*worker.descriptors(), worker.pidfd if worker.pidfd is not None else
                os.pidfd_open(worker.proc.pid)]
        workers.append({"pid": worker.proc.pid, "info": held.info, "compiled": held.compiled,
                        "owed": held.owed, "pending": worker.pending,
                        "device_gib": held.device_gib,
                        "profiled": worker.profiled,
                        "buffer": base64.b64encode(worker.buffered).decode()})
    return {"key": lease.key, "init_seed": lease.init_seed, "state": str(lease.state),
            "breakdowns": lease.breakdowns, "workers": workers}, fds


def sent(lease: Lease, fds: list[int], delivered: bool = True) -> None:
    """After `to_wire`'s message: delivered, the receiver holds the processes now and this
    process's ends close; else the processes are closed. Pidfds opened for the message
    close either way."""
    for held, pidfd in zip(lease.loaded, fds[3::4], strict=True):
        if held.worker.pidfd != pidfd:
            os.close(pidfd)
        if delivered:
            held.worker.release()
        else:
            held.worker.close()


def from_wire(message: dict[str, Any], fds: list[int]) -> Lease:
    """The lease `to_wire` sent, its workers adopted from the descriptors received."""
    loaded = []
    for n, item in enumerate(message["workers"]):
        commands, reply, log, pidfd = fds[4 * n:4 * n + 4]
        worker = Worker.adopt("reference", Adopted(int(item["pid"]), pidfd), commands, reply,
                              log, base64.b64decode(item["buffer"]))
        worker.pending, worker.profiled = int(item["pending"]), bool(item["profiled"])
        loaded.append(Loaded(worker, item["info"], item["compiled"],
                             [float(t) for t in item["owed"]], float(item["device_gib"])))
    return Lease(message["key"], loaded[0], loaded[1] if len(loaded) > 1 else None,
                 int(message["init_seed"]), Path(message["state"]), message["breakdowns"])


def untouched(worker: Worker) -> bool:
    """Alive, and not scheduled below the judge: a process waiting in a pool or a lender
    can be reniced by any process of the user, and a baseline so slowed would flatter
    every candidate timed against it (`scheduling`)."""
    return how_touched(worker) is None


def how_touched(worker: Worker) -> str | None:
    """Why `untouched` says no, or None."""
    if not worker.alive:
        return "has ended"
    moved = departure(worker.proc.pid)
    return f"was rescheduled: {moved}" if moved else None
