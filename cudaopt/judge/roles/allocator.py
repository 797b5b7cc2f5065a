"""The C allocator's thresholds, fixed in every worker process, so that both contestants of a
CPU timing allocate alike whatever each process did before.

glibc serves an allocation at or above its mmap threshold with a fresh `mmap`, whose pages
fault in (and are zeroed) on first touch, and returns it to the system when freed. The
threshold starts at 128 KiB and rises to the size of the largest such block freed so far,
up to 32 MiB. So the same model, called in two processes, ran at two speeds: a process
that had once freed a large enough block kept its intermediates on the heap, one that had
not paid page faults on every call. KernelBench's Conv2d_GroupNorm_Tanh_HardSwish at batch
2 (8 MiB intermediates) took 20.9 ms a call in a fresh process and 6.5 ms with the
threshold above them; identity candidates judged on a 2-core CPU came out anywhere from
0.39x to 3.68x eager, depending on which worker had freed what (2026-12-07).

Fixing the thresholds at the values a long-running process settles at (32 MiB, and twice
that for trimming the heap) turns the rise off: every worker allocates as a warmed-up user
process does, and holds at most 64 MiB more than it uses. Larger blocks are still mapped
and given back, so multi-GiB host copies of KernelBench outputs cost what they did.
"""

from __future__ import annotations

import ctypes

#: The largest size served from the heap: glibc's own ceiling for its rising threshold.
MMAP_THRESHOLD_BYTES = 32 << 20
#: Free memory at the heap's top kept rather than given back: twice the above, as glibc sets
#: it when the threshold rises.
TRIM_THRESHOLD_BYTES = 64 << 20
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's <malloc.h>


def steady_allocator() -> bool:
    """Fix the thresholds in this process (and the processes it forks later); False where
    the C library has no `mallopt` or refused (not glibc): nothing to fix there."""
    try:  # the process's own symbols, libc's among them: no search for the library file
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)
                and mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES))
