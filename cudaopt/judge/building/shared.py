"""Finished `kernels/` builds shared between folders, keyed by everything that went in.

A candidate's build folder lives beside it, so the same sources in another folder (a run's
`best/` copy judged by the final check, a bench job's folder, the next run of the same
kernel, a reward service's batch) used to compile again: 15-60 s of C++ with torch's
headers, or of nvcc. Here a build that succeeded is copied into a per-user store under a
digest of its inputs: every file of `kernels/`, the judge's own binding sources, the
compiler flags (include paths, CUDA architecture, ABI), the compilers themselves and the
torch version. A folder whose inputs have that digest gets the module copied in instead of
compiled.

Only builds compiled from scratch in the call that stores them, and whose every header
lies in `kernels/`, in the judge's own sources or in the toolchain (torch, Python, CUDA,
the system), are stored: a header elsewhere could change without changing the digest, and
a folder's earlier objects could be anyone's. Only the judge writes the store; a sandboxed
command has its own caches inside its workspace. The judge's entry object, the same in
every build of the same flags, is kept beside the store the same way (`entry_object`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from cudaopt.judge.building.caches import cache_root, prune_builds
from cudaopt.judge.verdict.options import JudgeOptions

VERSION = 1  # of the digest's recipe
KEEP_BUILDS = 64
ENTRY = "cudaopt_module.o"  # the judge's own object in every build
MARKER = ".shared-key"  # in a build folder: the digest of what its module was built from
_SKIP_DIRS = {"build", "__pycache__", ".cudaopt"}


def kernel_store(options: JudgeOptions) -> Path:
    """Where the judge with `options` keeps its shared builds."""
    return cache_root(options) / "kernels"


def digest(kernels_dir: Path | None, flags: dict[str, str], data_dir: Path) -> str:
    """Of everything a build of `kernels_dir` takes in; without it, of what the judge's own
    entry object (`ENTRY`) is compiled from."""
    import torch

    h = hashlib.sha256(f"{VERSION}\0{torch.__version__}\0{sorted(flags.items())}".encode())
    for tool in (flags.get("cxx", ""), flags.get("nvcc", "")):
        found = shutil.which(tool) if tool else None
        if found:  # a compiler upgraded in place changes the code it emits
            stat = os.stat(os.path.realpath(found))
            h.update(f"\0{os.path.realpath(found)}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    for root in (data_dir, kernels_dir) if kernels_dir is not None else (data_dir,):
        for path in _files(root):
            h.update(f"\0{root.name}/{path.relative_to(root)}\0".encode())
            h.update(path.read_bytes())
    return h.hexdigest()[:24]


def _files(root: Path) -> list[Path]:
    found = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        found += [Path(folder) / n for n in sorted(names) if not n.startswith(".")]
    return found


def fetch(store: Path, key: str, build_dir: Path, module: str) -> bool:
    """Copy a stored module into `build_dir` (caller holds the folder's build lock). The
    folder's own objects go: they belong to other sources, and ninja, seeing a module newer
    than them, could otherwise keep this one after the sources changed back."""
    stored = store / key / module
    if not stored.is_file():
        return False
    for stale in [*build_dir.glob("*.o"), *build_dir.glob("*.o.d"),
                  build_dir / ".ninja_log", build_dir / ".ninja_deps"]:
        stale.unlink(missing_ok=True)
    target = build_dir / module
    shutil.copyfile(stored, target.with_suffix(".tmp"))
    target.with_suffix(".tmp").replace(target)
    try:
        os.utime(stored.parent)  # most recently used
    except OSError:
        pass
    (build_dir / MARKER).write_text(key)
    return True


def store(store_dir: Path, key: str, build_dir: Path, allowed: list[Path], module: str,
          ninja: str) -> None:
    """Keep a finished build for other folders if every header that went into it lies in
    the `allowed` folders; a store that cannot be written (read-only home, full disk) only
    costs the reuse."""
    if not _self_contained(build_dir, ninja, allowed):
        return  # no marker either: ninja, which sees every header, decides next time
    (build_dir / MARKER).write_text(key)
    entry = store_dir / key
    try:
        entry.mkdir(parents=True, exist_ok=True)
        partial = entry / f".{module}.{os.getpid()}.tmp"
        shutil.copyfile(build_dir / module, partial)
        partial.replace(entry / module)
    except OSError:
        return
    prune_builds(store_dir, KEEP_BUILDS)


def _self_contained(build_dir: Path, ninja: str, allowed: list[Path]) -> bool:
    """Every dependency ninja recorded lies in an `allowed` folder."""
    proc = subprocess.run([ninja, "-C", str(build_dir), "-t", "deps"], capture_output=True,
                          text=True)
    if proc.returncode != 0:
        return False
    roots = [p.resolve() for p in allowed if p.resolve() != Path("/")]
    for line in proc.stdout.splitlines():
        if line.startswith((" ", "\t")) and line.strip():
            dep = Path(os.path.realpath(line.strip()))
            if not any(dep.is_relative_to(root) for root in roots):
                return False
    return True


def entry_path(store_dir: Path, key: str) -> Path:
    """Where the entry object of the builds with digest `key` is kept: beside the store."""
    return store_dir.parent / "entry" / key / ENTRY


def entry_object(store_dir: Path, key: str) -> Path | None:
    """The judge's entry object (`ENTRY`: the module's one fixed source, compiled with
    torch's headers) kept from an earlier build with the same flags, or None. Every build
    links the same object: compiling it took 3.5 s of a 17 s CPU build."""
    found = entry_path(store_dir, key)
    return found if found.is_file() else None


def keep_entry(store_dir: Path, key: str, built: Path) -> None:
    """Keep the entry object a build just compiled for the builds after it."""
    folder = entry_path(store_dir, key).parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        partial = folder / f".{ENTRY}.{os.getpid()}.tmp"
        shutil.copyfile(built, partial)
        partial.replace(folder / ENTRY)
    except OSError:
        pass
