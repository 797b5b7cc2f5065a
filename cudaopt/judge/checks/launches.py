"""Which of the candidate's own kernels a call launched (CUDA).

A candidate earns a speed milestone for its kernels: one whose calls launch none of its own
(every kernel comes from a PyTorch operator it was allowed, or it launches nothing and
returns a kept result) has nothing of its own to be fast with. The profiled back-to-back
burst (`burst`, after every timed call: a process once profiled launches slower) records
the calls' GPU kernels and which CPU operator launched each; the candidate's own are those
no aten operator launched: its CUDA C++ kernels, its Triton
kernels, and the cuBLAS or cuDNN kernels its C++ calls directly. Like the operator guard,
this runs inside the candidate's process, so a candidate can hide from it; it is there to
catch kernels that are not there, not to prove the ones that are.
"""

from __future__ import annotations

from typing import Any

from torch.autograd import DeviceType

NAME_CHARS = 160


def own_kernels(events: Any) -> set[str]:
    """Kernel names less those launched inside an aten operator (the profiler hangs a
    kernel on the CPU event that launched it: the runtime's launch call or the operator
    around it)."""
    every: set[str] = set()
    by_aten: set[str] = set()
    for event in events:
        if event.device_type == DeviceType.CUDA:
            every.add(event.name)
        kernels = getattr(event, "kernels", None)
        if kernels and _under_aten(event):
            by_aten.update(kernel.name for kernel in kernels)
    return {name[:NAME_CHARS] for name in every - by_aten}


def _under_aten(event: Any) -> bool:
    while event is not None:
        if event.name.startswith("aten::"):
            return True
        event = getattr(event, "cpu_parent", None)
    return False
