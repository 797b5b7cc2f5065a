"""Is every bit of work a call causes ordered with the current stream when it returns?

A kernel left running on a stream that the current stream never waits for is a race for
every real caller (the next layer, `.clone()`, `.cpu()` may read the output first), and it
hides from device events recorded on the current stream. Whether it is there must not
depend on a threshold that grows with noise, so two deterministic checks run in the
candidate's process (CUDA only):

- **CUDA graph capture** of one call on a *blocking* side stream. Work forked from the
  capturing stream and never joined back fails the capture ("unjoined work"); work on an
  unrelated stream is not recorded at all, so a replay onto outputs filled with NaN leaves
  them unwritten, which the reference comparison shows. (The capture stream is blocking so
  that a kernel launched on the legacy default stream, which is ordered with the current
  stream in ordinary use, makes the capture fail instead of silently escaping it.)
- Where capture is impossible for other reasons (a synchronizing call, the legacy stream,
  an API graphs do not support), **the current-stream snapshot**: the outputs are copied on
  the current stream right after the call, then again after a device-wide synchronize; any
  byte that differs was written after the current stream had finished. Each call is tried
  with the device held busy first (so work forked from the current stream starts late) and
  without. A difference is proof; agreement is evidence only, which is why the credited
  time also never excludes work the call caused (see `profile`).
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable
from typing import Any

import torch

from cudaopt.judge.workers.tensors import Snapshot, flatten, snapshot

_T = torch.Tensor
_clone, _fill, _equal = _T.clone, _T.fill_, torch.equal
_sleep = torch.cuda._sleep
_Graph = torch.cuda.CUDAGraph
_stream_ctx = torch.cuda.stream
_current = torch.cuda.current_stream
_empty_cache = torch.cuda.empty_cache
_HOLD_CYCLES = 2_000_000  # about a millisecond of one busy kernel before the call
SNAPSHOT_TRIES = 6
_CHUNK_BYTES = 1 << 28
UNJOINED = "unjoined"  # cudaErrorStreamCaptureUnjoined: "capturing stream has unjoined work"

RULE = ("work left unordered with the current stream when forward returns (launch on "
        "torch.cuda.current_stream(), or make it wait for your stream: a real caller would "
        "read the output before it is written)")


@functools.cache
def _blocking_stream(device: torch.device) -> torch.cuda.ExternalStream:
    """A stream created without `cudaStreamNonBlocking` (torch's own streams all are)."""
    torch.cuda.synchronize(device)  # the device's context is current on this thread
    cuda = ctypes.CDLL("libcuda.so.1")
    handle = ctypes.c_void_p()
    result = cuda.cuStreamCreate(ctypes.byref(handle), ctypes.c_uint(0))
    if result != 0:
        raise RuntimeError(f"cuStreamCreate failed ({result})")
    return torch.cuda.ExternalStream(handle.value, device=device)


def capture(fn: Callable[..., Any], inputs: list[Any],
            device: torch.device) -> tuple[torch.cuda.CUDAGraph | None, Any, str]:
    """Capture one call into a graph: (graph, outputs, "") or (None, None, why it failed).

    What the calls before left in the allocator's cache goes back to the device first: the
    graph's outputs come from a private pool that cannot reuse it, and on a task with
    multi-GB outputs that pool on top of the cache made this the process's largest hold."""
    stream = _blocking_stream(device)
    torch.cuda.synchronize(device)
    _empty_cache()
    stream.wait_stream(_current(device))
    graph, out, errors = _Graph(), None, []
    with _stream_ctx(stream):
        graph.capture_begin(capture_error_mode="thread_local")
        try:
            out = fn(*inputs)
        except Exception as exc:  # noqa: BLE001 - any failure inside capture is a finding
            errors.append(f"{type(exc).__name__}: {exc}")
        try:
            graph.capture_end()
        except Exception as exc:  # noqa: BLE001
            errors.append(f"{type(exc).__name__}: {exc}")
    _settle(device)
    if errors:
        return None, None, " / ".join(e.strip().splitlines()[0][:300] for e in errors)
    return graph, out, ""


def refill(inputs: list[Any], fresh: list[Any]) -> None:
    """The replay's input values, copied into the tensors the graph was captured on."""
    for old, new in zip(inputs, fresh, strict=True):
        if isinstance(old, torch.Tensor):
            old.copy_(new)


def replay(graph: torch.cuda.CUDAGraph, out: Any, inputs: list[Any],
           device: torch.device) -> Snapshot:
    """Replay (on inputs `refill` set), with every output not aliasing an input poisoned
    first: whatever the graph did not record stays NaN (or extreme integers), even what a
    thread of the candidate's wrote there while the capture ran."""
    held = {t.untyped_storage().data_ptr() for t in inputs if isinstance(t, torch.Tensor)}
    for _, leaf in flatten(out)[1]:
        if leaf.untyped_storage().data_ptr() not in held:
            _poison(leaf)
    graph.replay()
    torch.cuda.synchronize(device)
    return snapshot(out)


def snapshot_race(fn: Callable[..., Any], inputs: list[Any], device: torch.device,
                  returned: set[int] | None = None) -> bool:
    """Whether an output changed after the current stream had finished the call; the
    storage addresses of the outputs go into `returned`."""
    for attempt in range(SNAPSHOT_TRIES):
        torch.cuda.synchronize(device)
        if attempt % 2 == 0:
            _sleep(_HOLD_CYCLES)  # forked work starts only after this, late
        out = fn(*inputs)
        leaves = flatten(out)[1]
        if returned is not None:
            returned.update(t.untyped_storage().data_ptr() for _, t in leaves)
        early = [_clone(t) for _, t in leaves]  # queued on the current stream after the call
        torch.cuda.synchronize(device)
        if any(not same_bytes(a, t) for a, (_, t) in zip(early, leaves, strict=True)):
            return True
    return False


def returned_before(out: Any, inputs: list[Any], returned: set[int]) -> bool:
    """Whether the captured call returned an output that an earlier call had returned (not an
    input): memory allocated during a capture comes from the graph's private pool, so a
    match is a result kept from before, not one this call computed."""
    held = {t.untyped_storage().data_ptr() for t in inputs if isinstance(t, torch.Tensor)}
    try:
        leaves = flatten(out)[1]
    except TypeError:
        return False
    return any(t.untyped_storage().data_ptr() in returned - held for _, t in leaves)


STALE = ("stale output: forward returned an output it had computed for an earlier call "
         "instead of computing this one")


def same_bytes(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bitwise equality (NaN equals itself), by chunks: outputs reach gigabytes."""
    a, b = (t.contiguous().reshape(-1).view(torch.uint8) for t in (a, b))
    return all(_equal(a[i:i + _CHUNK_BYTES], b[i:i + _CHUNK_BYTES])
               for i in range(0, a.numel(), _CHUNK_BYTES))


def _poison(t: torch.Tensor) -> None:
    if t.dtype.is_floating_point or t.dtype.is_complex:
        _fill(t, float("nan"))
    elif t.dtype == torch.bool:
        _fill(t, True)
    else:
        _fill(t, torch.iinfo(t.dtype).max)


def _settle(device: torch.device) -> None:
    """After a capture, successful or not: the eager work done. A failed capture can leave a
    stream the candidate forked still capturing, and the synchronize then fails: the caller
    runs nothing more in this process."""
    try:
        torch.cuda.synchronize(device)
    except RuntimeError:
        pass
