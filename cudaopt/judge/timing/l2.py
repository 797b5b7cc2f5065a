"""The persisting-L2 set-aside, reset before every timed call (CUDA).

A kernel may set aside part of the L2 cache for "persisting" accesses
(`cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, …)` plus an access-policy window on
its stream or launch): lines it marks persisting then survive the judge's L2 flush, which
only writes a buffer through the cache, so its weights would be timed warm where the cold
protocol promises cold (llm.c #851: 3530 GB/s reported on an 864 GB/s card). Before each
timed call both workers demote every persisting line (`cuCtxResetPersistingL2Cache`) and
set the set-aside back to zero, so no window has room to persist into; what the candidate
had set aside is remembered and reported in the verdict. Driver calls through ctypes, on
the context torch made current (its primary context).
"""

from __future__ import annotations

import ctypes
import functools

CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06


@functools.cache
def _driver() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None


def persisting_bytes() -> int:
    """The current context's persisting-L2 set-aside, in bytes (0 without a driver)."""
    cuda = _driver()
    if cuda is None:
        return 0
    value = ctypes.c_size_t(0)
    if cuda.cuCtxGetLimit(ctypes.byref(value), ctypes.c_int(CU_LIMIT_PERSISTING_L2_CACHE_SIZE)):
        return 0
    return int(value.value)


def reset_persisting() -> int:
    """Demote persisting lines and set the set-aside to zero; returns the set-aside found
    (bytes) before the reset."""
    cuda = _driver()
    if cuda is None:
        return 0
    found = persisting_bytes()
    cuda.cuCtxResetPersistingL2Cache()
    if found:
        cuda.cuCtxSetLimit(ctypes.c_int(CU_LIMIT_PERSISTING_L2_CACHE_SIZE), ctypes.c_size_t(0))
    return found
