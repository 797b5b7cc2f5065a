"""The binding header, precompiled once per cache and flags for the `kernels/` builds after it.

Every binding file includes `cudaopt_binding.h`, which pulls in torch's tensor API and
pybind11: about 375,000 lines that g++ parses again in every binding compile, the longest
step of a new candidate's build. g++ can load that parse from a precompiled header instead:
a new folder's build of the shipped CUDA example on an H100 host took 13.38-13.61 s without
it and 6.64-7.07 s with it, and of the CPU example on 2 cores 15.85-17.20 s and 7.25-7.58 s
(`benchmarks/binding_build.py`). What is left is the binding's own templates and code
generation, which no cache shares.

Making the header costs nearly two binding compiles (24.3 s alone on 2 cores, where the
binding took 13.7 s without it and 6.1 s with it), so no build waits for it, and a cache
that compiles a single binding never pays for it: the second build that compiles a binding
without it starts it in a process of its own (`start`), and the builds after that one use
it. A folder keeps the way it compiled its binding until the binding changes, or the
header's arrival would cost the next edit of a kernel a compile of the binding. Each header
is about 500 MB: making one prunes the others but the `KEEP` newest, never one a build used
in the last hour.

g++ uses the compiled form only where the flags match those it was made with, and reads the
header itself otherwise, so a stale one costs time, never a wrong build. It is given with
`-include`, ahead of the source's own lines, so only a source that includes it with nothing
but toolchain headers before it gets it: a definition, condition or local header of its
own could change what the header means.
"""

from __future__ import annotations

import fcntl
import functools
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from cudaopt.judge.building.caches import prune_builds

HEADER = "cudaopt_binding.h"
COMPILED = HEADER + ".gch"
ASKED = "asked"  # in the folder: a binding was compiled without the header once already
FAILED = "failed"  # in the folder: g++ could not make it with these flags; not tried again
KEEP = 4  # headers kept (about 500 MB each): a CPU's and a GPU's flags, before and after an upgrade
#: What may come before the header's `#include` for it to be given first: a toolchain's
#: header (`<...>`) or `#pragma once`. A definition, condition or local header could change
#: what the header means, so a source with one before it reads the header itself.
_TOOLCHAIN_INCLUDE = re.compile(r"^\s*#\s*(include\s*<|pragma\s+once\b)")
_INCLUDES_HEADER = re.compile(r'^\s*#\s*include\s*[<"]' + re.escape(HEADER) + r'[>"]')


def folder(store: Path, key: str) -> Path:
    """Where the header compiled with the flags of digest `key` is kept: beside the store
    (as the entry object is, see `shared`)."""
    return store.parent / "pch" / key


def ready(where: Path) -> Path | None:
    """The header to give with `-include` when its compiled form is there, else None."""
    header = where / HEADER
    return header if header.is_file() and (where / COMPILED).is_file() else None


def used(where: Path) -> None:
    """Mark the header in `where` as in use: one used in the last hour is never pruned."""
    try:
        os.utime(where)
    except OSError:
        pass


def applies(source: Path) -> bool:
    """Whether `source` (a C++ file of `kernels/`) includes the binding header with nothing
    but toolchain headers before it, and the judge's header is the one it would find (not a
    copy of its own beside it)."""
    if (source.parent / HEADER).exists():
        return False
    try:
        lines = source.read_text(errors="replace").splitlines()
    except OSError:
        return False
    for line in lines:
        if _INCLUDES_HEADER.match(line):
            return True
        if line.lstrip().startswith("#") and not _TOOLCHAIN_INCLUDE.match(line):
            return False
    return False


@functools.cache
def is_gcc(cxx: str) -> bool:
    """Whether the C++ compiler is g++: other compilers keep their headers otherwise."""
    try:
        out = subprocess.run([cxx, "--version"], capture_output=True, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "Free Software Foundation" in out and "clang" not in out.lower()


def start(where: Path, data_dir: Path, cxx: str, cflags: str) -> None:
    """After a binding compiled without the header: the second time, precompile it into
    `where` in a process of its own (one that outlives the build), unless it is there or
    being made, or failed with these flags before."""
    if ready(where) is not None or (where / FAILED).exists() or not is_gcc(cxx):
        return
    try:
        where.mkdir(parents=True, exist_ok=True)
        (where / ASKED).touch(exist_ok=False)  # one of two builds at once is the first
        return
    except FileExistsError:
        pass
    except OSError:
        return
    subprocess.Popen([sys.executable, "-m", __name__, str(where), str(data_dir / HEADER),
                      cxx, cflags], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True)


def _make(where: Path, header: Path, cxx: str, cflags: str) -> int:
    """Copy the header into `where` and compile it there, both renamed into place, under a
    lock: one process makes it, the others leave."""
    with open(where / ".lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return 0
        if ready(where) is not None:
            return 0
        for left in where.glob(f".{HEADER}*"):  # of a maker killed before its rename
            left.unlink(missing_ok=True)
        partial = where / f".{HEADER}.{os.getpid()}"
        shutil.copyfile(header, partial)
        partial.replace(where / HEADER)
        compiled = where / f".{COMPILED}.{os.getpid()}"
        proc = subprocess.run([cxx, *shlex.split(cflags), "-x", "c++-header",
                               str(where / HEADER), "-o", str(compiled)],
                              stdin=subprocess.DEVNULL, capture_output=True)
        if proc.returncode != 0:
            compiled.unlink(missing_ok=True)
            (where / FAILED).write_bytes(proc.stderr[-4000:])
            return proc.returncode
        compiled.replace(where / COMPILED)
    prune_builds(where.parent, KEEP)  # other flags' headers, unused for an hour
    return 0


if __name__ == "__main__":
    os.nice(19)  # behind whatever else is building, judging or timing
    sys.exit(_make(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]))
