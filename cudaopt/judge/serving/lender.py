"""The machine judge's store of leases: the loaded pairs that pools let go, kept for the
next pool of the same task, in the machine judge itself or in any process of its user's.

Bounded: each lease holds its task's model twice, so the store keeps at most `MAX_LEASES`
of them, and on a GPU at most `CUDAOPT_LEND_GIB` of device memory in all (8 GiB by
default), beside what the pools judging now hold; the least recently given goes first. A
lease for a key already held replaces it: the newer pair has the newer compiled baseline.
Weights are kept in the judge's own folder, one file per key and seed, checked against the
digest the reference took (`lending.keep_state`).
"""

from __future__ import annotations

import os
import shutil
import threading
from collections import OrderedDict
from pathlib import Path

from cudaopt.judge.workers.lending import Lease, keep_state

MAX_LEASES = 2
BUDGET_ENV, BUDGET_GIB = "CUDAOPT_LEND_GIB", 8.0


def budget_gib() -> float:
    try:
        return float(os.environ.get(BUDGET_ENV, BUDGET_GIB))
    except ValueError:
        return BUDGET_GIB


class Store:
    """A `Lender` in the machine judge's process."""

    def __init__(self, folder: Path, limit: int = MAX_LEASES):
        self.folder = folder
        self.folder.mkdir(mode=0o700, exist_ok=True)
        self.limit = limit
        self.budget_gib = budget_gib()
        self._held: OrderedDict[str, Lease] = OrderedDict()
        self._lock = threading.Lock()

    def borrow(self, key: str) -> Lease | None:
        with self._lock:
            lease = self._held.pop(key, None)
        flaw = lease.flaw() if lease is not None else None
        if lease is not None and flaw:
            _refused(lease, flaw)
            return None
        return lease

    def give(self, lease: Lease) -> None:
        """Keep it, or close it where it is unsound, too large or its weights changed.
        What goes is closed in the background: a giver waits only for the weights' copy."""
        flaw = lease.flaw()
        if not flaw and lease.device_gib > self.budget_gib:
            flaw = (f"it holds {lease.device_gib:.1f} GiB of device memory, over "
                    f"{BUDGET_ENV}={self.budget_gib:g}")
        if not flaw and not (lease.state.parent == self.folder
                             or keep_state(lease, self.folder)):
            flaw = "its weights no longer match their digest"
        if flaw:
            _refused(lease, flaw)
            return
        with self._lock:
            old = self._held.pop(lease.key, None)
            self._held[lease.key] = lease
            gone = [old] if old is not None else []
            while len(self._held) > self.limit or sum(
                    held.device_gib for held in self._held.values()) > self.budget_gib:
                gone.append(self._held.popitem(last=False)[1])
        if gone:
            threading.Thread(target=_retire, args=(gone,), daemon=True).start()

    def __len__(self) -> int:
        return len(self._held)

    def close(self) -> None:
        with self._lock:
            held, self._held = list(self._held.values()), OrderedDict()
        _retire(held)
        shutil.rmtree(self.folder, ignore_errors=True)  # weights of leases never given back


def _refused(lease: Lease, flaw: str) -> None:
    """Closed, and why said in this judge's log: the next judgement of the task loads anew."""
    print(f"not keeping the loaded pair of {lease.key[:12]}: {flaw}", flush=True)
    _retire([lease])


def _retire(leases: list[Lease]) -> None:
    """Close their processes and remove their weights where those are the store's copy."""
    for lease in leases:
        lease.close()
        if lease.state.name.startswith(lease.key):
            lease.state.unlink(missing_ok=True)
