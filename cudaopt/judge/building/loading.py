"""A task or candidate file imported in a worker process, and its model built on the device.

Every process that runs task or candidate code does this the same way: the judge's worker
roles, the `load_inline` build done ahead (`inline_build`, whose whole point is this
import: a KernelBench candidate compiles its CUDA when imported) and Nsight Compute's
target. It sits below the worker roles so those programs and the worker entry point that
starts them do not import each other.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import torch


def load_module(path: Path, name: str) -> ModuleType:
    """Import a file as a module under `name`, with its folder importable (sibling imports)."""
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def build_model(cls: type, init_inputs: list[Any], seed: int, device: torch.device) -> Any:
    """Construct on the device under a fixed seed; `no_grad` matches how users run inference."""
    torch.manual_seed(seed)
    with torch.device(device):
        model = cls(*init_inputs)
    return model.to(device)


def use_threads(threads: int | None) -> None:
    """The thread count the judge chose for every worker (CPU), before anything runs."""
    if threads:
        torch.set_num_threads(threads)


@contextmanager
def host_math(cuda: bool) -> Iterator[None]:
    """One intra-op thread, on a GPU, for the judge's own host-side math (the signal check's
    samples, a comparison's bookkeeping): it is small, and a team of threads on a host busy
    with other judgements' starts and compiles waits at every operator for its slowest
    member. The signal check took 1.86 s with torch's 16 threads and 0.09 s with one beside
    eight busy processes on an H200 (0.02 s idle; `benchmarks/host_threads.py`), 2 s of
    every `cudaopt check` there. The model's own calls keep torch's threads."""
    before = torch.get_num_threads()
    if cuda:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        if cuda:
            torch.set_num_threads(before)
