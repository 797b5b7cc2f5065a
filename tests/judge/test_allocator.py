"""Every worker process allocates alike, whatever it did before (`roles.allocator`): glibc's
rising mmap threshold made one process of a CPU timing map (and fault in) its intermediates
on every call and the other not, and identity candidates came out anywhere from 0.39x to
3.68x eager."""

from __future__ import annotations

import ctypes
import subprocess
import sys
from pathlib import Path

import pytest

from cudaopt.judge import JudgeOptions, check, worker_env
from cudaopt.judge.roles.allocator import MMAP_THRESHOLD_BYTES
from cudaopt.judge.workers.pool import JudgePool
from tests.conftest import forked_reference

BLOCK_BYTES = 24 << 20  # under the fixed threshold, above what most processes have freed
MAPPED = f'''import ctypes
import torch


class _Info(ctypes.Structure):  # glibc's struct mallinfo2
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


_mallinfo2 = ctypes.CDLL(None).mallinfo2
_mallinfo2.restype = _Info


def mapped():
    """Bytes of a {BLOCK_BYTES >> 20} MiB tensor's block that the allocator mapped for it
    alone (given back to the system when freed), rather than took from its heap."""
    before = _mallinfo2().hblkhd
    x = torch.empty({BLOCK_BYTES // 4})
    grown = _mallinfo2().hblkhd - before
    del x
    return grown
'''

_LIBC = ctypes.CDLL(None)
pytestmark = pytest.mark.skipif(
    not (hasattr(_LIBC, "mallopt") and hasattr(_LIBC, "mallinfo2")),
    reason="not glibc 2.33 or later: no mallopt or mallinfo2")


def _mapped(steady: bool) -> int:
    code = MAPPED + ("from cudaopt.judge.roles.allocator import steady_allocator\n"
                     "steady_allocator()\n" if steady else "") + "print(mapped())\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)
    return int(done.stdout.split()[-1])


def test_a_steady_process_takes_blocks_under_the_threshold_from_its_heap() -> None:
    assert BLOCK_BYTES < MMAP_THRESHOLD_BYTES
    assert _mapped(steady=False) >= BLOCK_BYTES  # glibc's default: mapped, and unmapped
    assert _mapped(steady=True) == 0


def test_every_worker_that_runs_a_model_allocates_steadily(tmp_path: Path) -> None:
    """The reference (forked from the template) and the candidate (a new process): each
    records, as it builds its model, how its allocator served the same block."""
    record = tmp_path / "mapped.txt"
    task = MAPPED + f'''import os
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        with open({str(record)!r}, "a") as out:
            out.write(f"{{os.getpid()}} {{mapped()}}\\n")

    def forward(self, x):
        return x + 1


def get_inputs():
    return [torch.randn(64)]


def get_init_inputs():
    return []
'''
    (tmp_path / "task.py").write_text(task)
    (tmp_path / "cand.py").write_text(task + "\n\nclass ModelNew(Model):\n    pass\n")
    opts = JudgeOptions(device="cpu", profile=False, allow=["*"], trials=1)
    pool = JudgePool(worker_env(opts), isolate=False)
    try:
        forked_reference(pool).discard()
        verdict = check(tmp_path / "task.py", tmp_path / "cand.py", opts, pool=pool)
        assert verdict.correct, verdict.error  # refused all the same: it imports ctypes
    finally:
        pool.close()
    lines = [line.split() for line in record.read_text().splitlines()]
    assert len({pid for pid, _ in lines}) >= 2, lines
    assert all(int(grown) == 0 for _, grown in lines), lines
