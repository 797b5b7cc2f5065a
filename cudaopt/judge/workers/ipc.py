"""CUDA outputs shared between worker processes by CUDA IPC handles, without copies.

KernelBench tasks return multi-GB tensors and a judgement compares dozens of them; a round
trip through host memory costs seconds each (and /dev/shm may be far smaller than the
output). The candidate worker exports the device memory of its judge-owned output copies;
the reference worker maps it, compares in place and unmaps it before replying, so the
candidate may free it afterwards. Only the CUDA driver API is used (`libcuda.so.1`, present
wherever CUDA runs), through ctypes: the handle is 64 opaque bytes, nothing is unpickled.

IPC can be unavailable (memory from a virtual-memory allocator, a sandbox in other
namespaces, a driver that refuses); `OpenFailed` tells the caller to fall back to files.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

_HANDLE_BYTES = 64
_LAZY_PEER_ACCESS = 1  # CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS


class OpenFailed(RuntimeError):
    """The exported memory could not be mapped here."""


class _Handle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_ubyte * _HANDLE_BYTES)]  # c_char would stop at a NUL


@functools.cache
def _cuda() -> ctypes.CDLL:
    """Loaded on first use, not at import: CPU-only machines have no libcuda. (Cached in the
    function, not a module global, which the candidate worker's tamper check would see
    change.)"""
    try:
        return ctypes.CDLL("libcuda.so.1")
    except OSError as exc:
        raise OpenFailed(f"no CUDA driver library: {exc}") from exc


def _check(result: int, what: str) -> None:
    if result != 0:
        name = ctypes.c_char_p()
        _cuda().cuGetErrorName(result, ctypes.byref(name))
        raise OpenFailed(f"{what} failed: {(name.value or b'?').decode()} ({result})")


def _range(ptr: int) -> tuple[int, int]:
    """Base address and size of the allocation that holds `ptr`."""
    base, size = ctypes.c_uint64(), ctypes.c_size_t()
    _check(_cuda().cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size),
                                           ctypes.c_uint64(ptr)), "cuMemGetAddressRange")
    return base.value, size.value


def export(t: torch.Tensor) -> dict[str, Any]:
    """A handle to the allocation holding contiguous CUDA tensor `t`, and where `t` lies in it.

    Raises `OpenFailed` when the memory cannot be exported."""
    torch.cuda.synchronize(t.device)  # also makes the device's context current on this thread
    ptr = t.data_ptr()
    base, _ = _range(ptr)
    handle = _Handle()
    _check(_cuda().cuIpcGetMemHandle(ctypes.byref(handle), ctypes.c_uint64(base)),
           "cuIpcGetMemHandle")
    return {"ipc": bytes(handle.reserved).hex(), "offset": ptr - base,
            "nbytes": t.numel() * t.element_size()}


@contextmanager
def opened(handle_hex: str, device: torch.device) -> Iterator[torch.Tensor]:
    """The whole exported allocation as a uint8 tensor on `device`, valid inside the block.

    A process may map one allocation only once at a time: callers open each handle once."""
    raw = bytes.fromhex(handle_hex)
    if len(raw) != _HANDLE_BYTES:
        raise OpenFailed("malformed IPC handle")
    torch.cuda.synchronize(device)
    handle = _Handle()
    ctypes.memmove(ctypes.addressof(handle), raw, _HANDLE_BYTES)
    base = ctypes.c_uint64()
    _check(_cuda().cuIpcOpenMemHandle_v2(ctypes.byref(base), handle, _LAZY_PEER_ACCESS),
           "cuIpcOpenMemHandle")
    try:
        _, size = _range(base.value)
        yield torch.as_tensor(_Array(base.value, size), device=device)
        torch.cuda.synchronize(device)  # nothing may still read the mapping once it closes
    finally:
        _cuda().cuIpcCloseMemHandle(ctypes.c_uint64(base.value))


class _Array:
    """A bare `__cuda_array_interface__`, so torch wraps the mapped bytes without a copy."""

    def __init__(self, ptr: int, nbytes: int):
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1",
                                         "data": (ptr, False), "version": 2}
