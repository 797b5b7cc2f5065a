"""One call at a time, the same way in both workers: the per-call protocol of the judge.

Every call, checked or timed, for the reference and the candidate alike, takes two steps:

- `prep`: settle the previous call (keep or drop the copy of its outputs; check that it left
  its inputs as they were drawn), draw fresh inputs from the given seed, or refill the
  previous call's tensors with them (same objects, same memory, new values, so a result
  cached by tensor identity, pointer or shape comes out stale), and flush the cache;
- `go`: one timed call, then an immediate copy of its outputs and the digest that binds
  them (see `digest`), before the reply is sent.

Whether a call's outputs are checked is decided by the parent after `go` has answered, so
nothing in the worker's process knows it while the call runs, and the digest in the reply
binds the copy the worker may later be asked for. Both workers do the same work around a
call, so the parent's clock sees the same overhead around a baseline call and a candidate
call, and the difference is the call itself: that clock, from the `prep` that hands over
the seed to the `go` reply, is what the candidate's time is credited from (`crosscheck`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from cudaopt.judge.checks.variants import derive
from cudaopt.judge.timing import l2
from cudaopt.judge.timing.timer import CallTimer
from cudaopt.judge.workers.digest import digest
from cudaopt.judge.workers.tensors import PendingPrints, Place, Snapshot, draw_inputs, snapshot

_copy = torch.Tensor.copy_


class Bench:
    """Inputs of the current call, the copy of its outputs, and the copies kept for checks."""

    def __init__(self, task: Any, device: torch.device):
        self.task = task
        self.device = device
        self.timer = CallTimer(device)
        self.inputs: list[Any] = []
        self.prints: list[Any] = []
        self.last: Snapshot | None = None
        self.last_digest = ""  # the commitment to `last` (see `digest`)
        self.kept: dict[str, Snapshot] = {}
        self.l2_persisting_bytes = 0  # the largest persisting-L2 set-aside reset (see `l2`)
        # the set-aside the device had before anything of the candidate's ran (an H200
        # reports 11.25 MiB on its own): finding it at the first reset is no one's doing
        self.l2_expected = l2.persisting_bytes() if self.timer.cuda else 0

    def prep(self, seed: int, refill: bool, keep: str | None,
             variant: dict[str, Any] | None = None) -> list[str]:
        """`variant`: the drawn inputs restructured (see `variants`), for verification. The
        last call's inputs are fingerprinted before they are refilled or dropped, the fresh
        ones after, and both prints come back to the host together."""
        pending, printed = PendingPrints(), self.prints
        before = self._keep_last(keep, pending)
        if not refill:  # the last call's inputs are not reused: free them before drawing
            self.inputs, self.prints = [], []
        fresh = draw_inputs(self.task, seed, self.device)
        if variant:
            fresh = derive(fresh, variant, lambda s: draw_inputs(self.task, s, self.device))
        if refill and same_layout(self.inputs, fresh):
            for old, new in zip(self.inputs, fresh, strict=True):
                if isinstance(old, torch.Tensor):
                    _copy(old, new)
            fresh = [old if isinstance(old, torch.Tensor) else new
                     for old, new in zip(self.inputs, fresh, strict=True)]
        self.inputs = fresh
        now, self.prints = pending.read(before, pending.add(fresh))
        found = _changed(now, printed)
        if self.timer.cuda:
            set_aside = l2.reset_persisting()
            if set_aside and set_aside != self.l2_expected:
                self.l2_persisting_bytes = max(self.l2_persisting_bytes, set_aside)
            self.l2_expected = 0  # the reset leaves none
        self.timer.prepare()
        return found

    def settle(self, keep: str | None) -> list[str]:
        """Keep (under `keep`) or drop the last call's outputs; check its inputs are intact."""
        pending = PendingPrints()
        now, = pending.read(self._keep_last(keep, pending))
        found = _changed(now, self.prints)
        self.prints = now
        return found

    def _keep_last(self, keep: str | None, pending: PendingPrints) -> list[Place]:
        """The last call's outputs kept under `keep`, or dropped; its inputs' prints asked."""
        if keep and self.last is not None:
            self.kept[keep] = self.last
        self.last = None
        return pending.add(self.inputs)

    def memory_gib(self) -> list[float] | None:
        """Device memory of this process: in live tensors, held now, and the most it ever
        held (an executor sizes its lanes by the last, see `Verdict.device_memory_gib`)."""
        if not self.timer.cuda:
            return None
        return [torch.cuda.memory_allocated(self.device) / 2**30,
                torch.cuda.memory_reserved(self.device) / 2**30,
                torch.cuda.max_memory_reserved(self.device) / 2**30]

    def release(self) -> None:
        """Drop the current inputs and outputs; the next call is prepared from scratch."""
        self.inputs, self.prints, self.last = [], [], None

    def go(self, fn: Callable[..., Any]) -> tuple[float, float, list[str]]:
        """Time one call on the prepared inputs, copy its outputs at once and bind the copy
        (`last_digest`, for the reply)."""
        self.last_digest = ""
        dev_ms, host_ms, out = self.timer.time(fn, self.inputs)
        try:
            self.last = snapshot(out)
        except TypeError as exc:
            return dev_ms, host_ms, [f"output not accepted: {exc}"]
        self.last_digest = digest(self.last[0], dict(self.last[1]))
        self.timer.sync()  # the copy is complete before the reply goes out
        return dev_ms, host_ms, []


def _changed(now: list[Any], printed: list[Any]) -> list[str]:
    """The inputs whose prints `now` differ from those `printed` before the last call."""
    return [f"candidate modified input {i} in place" for i, (a, b)
            in enumerate(zip(now, printed, strict=True)) if a != b]


def same_layout(old: list[Any], new: list[Any]) -> bool:
    """Refilling needs tensors of the same shape, dtype and device in the same places."""
    if len(old) != len(new):
        return False
    return all(
        (type(a) is torch.Tensor) == (type(b) is torch.Tensor)
        and (type(a) is not torch.Tensor
             or (a.shape == b.shape and a.dtype == b.dtype and a.device == b.device))
        for a, b in zip(old, new, strict=True))
