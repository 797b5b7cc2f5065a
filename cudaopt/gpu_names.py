"""GPU names across processes: a process that narrows CUDA_VISIBLE_DEVICES for a child must
name the GPU as the host does, not by its own index (with CUDA_VISIBLE_DEVICES=2,3 a
process's cuda:0 is the host's GPU 2)."""

from __future__ import annotations

import os


def gpu_identity(index: int) -> str:
    """How the host names the GPU this process calls `cuda:index`: through
    CUDA_VISIBLE_DEVICES when set (an index, a UUID or a MIG name), else the index."""
    visible = [x.strip() for x in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")
               if x.strip()]
    return visible[index] if index < len(visible) else str(index)
