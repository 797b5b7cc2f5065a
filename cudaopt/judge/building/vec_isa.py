"""torch.compile's check of the CPU's vector instructions, paid once per machine, not per process.

Before its first CPU kernel in a process, inductor finds which vector instruction sets
(AVX-512, AVX2, ...) the CPU lists and its C++ compiler can use: it builds a small library per
set (kept in its cache) and loads each one in a new Python process
(`torch._inductor.cpu_vec_isa.valid_vec_isa_list`). Every baseline process paid those loads
again: 1.3-1.4 s of a CPU compile served from a warm cache on a 2-core host, about a fifth of
a small task's judgement, and more of the test suite.

The answer depends only on the CPU, the compiler and torch. So the first process that probes
keeps it, in the inductor cache's folder, where every set the CPU lists passed; a later
process with the same CPU, compiler and torch takes that answer for the loads and still
builds (or finds in the cache) each library as torch does. Nothing else of inductor changes:
its configuration, and so its cache keys, stay as they were. Where a set failed, nothing is
kept and every process probes. A note forged by another process of the user makes a compile
use a set the CPU lists, which at worst fails that compile; whoever can write it can already
write the compiled libraries in the same folder, which the baseline loads and runs.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

FOLDER = "cudaopt-vec-isa"


@contextmanager
def kept_vec_isa() -> Iterator[None]:
    """Around a process's torch.compile calls: the check answered from a kept note before
    them, and the answer of a check they made kept after them. Nothing is done where the
    user decided the check (`cpp.vec_isa_ok`) or this is not an x86 CPU."""
    try:
        from torch._inductor import config, cpu_vec_isa

        note = None if config.cpp.vec_isa_ok is not None else _note()
    except Exception:  # noqa: BLE001 - the compile checks as torch does
        note = None
    if note is not None:
        _answer(note, cpu_vec_isa)
    yield
    if note is not None:
        _keep(note, cpu_vec_isa)


def _answer(note: Path, cpu_vec_isa) -> None:  # noqa: ANN001 - torch's module
    """Answer inductor's check from the kept note, where there is one."""
    try:
        if (_probed(cpu_vec_isa) or not hasattr(cpu_vec_isa.VecISA, "_probe_load")
                or not note.is_file()):
            return
        probe = cpu_vec_isa.VecISA._probe_load
        cpu_vec_isa.VecISA._probe_load = lambda self, path: True
        try:
            cpu_vec_isa.valid_vec_isa_list()
        finally:
            cpu_vec_isa.VecISA._probe_load = probe
    except Exception:  # noqa: BLE001 - the compile checks as torch does
        pass


def _keep(note: Path, cpu_vec_isa) -> None:  # noqa: ANN001 - torch's module
    """Keep the answer of a check this process made, where every set the CPU lists passed."""
    try:
        if not _probed(cpu_vec_isa) or note.is_file():
            return
        found = {str(isa) for isa in cpu_vec_isa.valid_vec_isa_list()}
        if found and found == _listed(cpu_vec_isa):
            note.parent.mkdir(parents=True, exist_ok=True)
            partial = note.with_suffix(f".{os.getpid()}")
            partial.write_text(json.dumps(sorted(found)))
            partial.replace(note)
    except Exception:  # noqa: BLE001 - only a later process's time depends on it
        pass


def _probed(cpu_vec_isa) -> bool:  # noqa: ANN001 - torch's module
    return bool(cpu_vec_isa.valid_vec_isa_list.cache_info().currsize)


def _listed(cpu_vec_isa) -> set[str]:  # noqa: ANN001 - torch's module
    flags = cpu_vec_isa.x86_isa_checker()
    return {str(isa) for isa in cpu_vec_isa.supported_vec_isa_list
            if all(flag in flags for flag in str(isa).split())}


def _note() -> Path | None:
    """The note's path for this CPU, compiler and torch, in inductor's cache folder (where
    its probe libraries are), or None on a CPU that is not x86."""
    import torch
    from torch._inductor import cpp_builder, cpu_vec_isa
    from torch._inductor.runtime.cache_dir_utils import cache_dir

    if platform.machine() not in ("x86_64", "AMD64"):
        return None
    cache = cache_dir()
    compiler = shutil.which(cpp_builder.get_cpp_compiler()) or ""
    stat = os.stat(compiler) if compiler else None
    key = json.dumps([torch.__version__, torch.__file__, compiler,
                      [stat.st_size, stat.st_mtime_ns] if stat else None,
                      sorted(cpu_vec_isa.x86_isa_checker())])
    return Path(cache) / FOLDER / hashlib.sha256(key.encode()).hexdigest()[:32]
