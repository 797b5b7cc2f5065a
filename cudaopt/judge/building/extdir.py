"""Where a candidate's `load_inline` builds go: one folder per content, never per name.

torch keys a JIT extension's build folder by the name the candidate picks, and decides
whether to rebuild from file times inside it: two candidates that both call their extension
`fused_kernel`, judged at once, overwrite each other's sources and one imports the other's
binary. Keying the folder by the candidate's sources makes concurrent judgements of
different code disjoint, while the same code (a candidate judged again, a warm pool's next
check of an unchanged file) still finds its earlier build.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from cudaopt.judge.building.caches import prune_builds

# Files beside model_new.py that a load_inline call may read its sources from.
SOURCE_SUFFIXES = (".py", ".cu", ".cuh", ".cpp", ".cc", ".cxx", ".h", ".hpp", ".inl")
MAX_SOURCE_BYTES = 8 << 20
KEEP_BUILDS = 64  # a data file that happens to match is hashed by size and time


def content_key(candidate: Path) -> str:
    """A digest of the candidate and the source files beside it and in its `kernels/`."""
    folder = candidate.resolve().parent
    digest = hashlib.sha256(candidate.read_bytes())
    files = [p for d in (folder, folder / "kernels") if d.is_dir() for p in sorted(d.iterdir())
             if p.is_file() and p.suffix in SOURCE_SUFFIXES and p != candidate.resolve()]
    for path in files:
        digest.update(f"\0{path.relative_to(folder)}\0".encode())
        stat = path.stat()
        if stat.st_size > MAX_SOURCE_BYTES:
            digest.update(f"{stat.st_size}:{stat.st_mtime_ns}".encode())
        else:
            digest.update(path.read_bytes())
    return digest.hexdigest()[:20]


def use_content_dir(candidate: Path) -> Path:
    """Point this process's `load_inline` builds at the folder for the candidate's content."""
    from torch.utils.cpp_extension import get_default_build_root

    base = Path(os.environ.get("TORCH_EXTENSIONS_DIR") or get_default_build_root())
    target = base / "by-content" / content_key(candidate)
    target.mkdir(parents=True, exist_ok=True)
    os.utime(target)  # most recently used
    prune_builds(target.parent, KEEP_BUILDS)
    os.environ["TORCH_EXTENSIONS_DIR"] = str(target)
    return target


def seed_build(candidate: Path, caches: dict[str, tuple[Path, Path]]) -> None:
    """Copy what the judge keeps of the candidate's content (its `load_inline` build, its
    Triton kernels' cache) into an isolated worker's own folders (see `isolation.confine`),
    so an unchanged candidate is not compiled again. `caches`: per kind, (the judge's
    folder, the worker's own)."""
    for shared, private in _places(candidate, caches):
        shutil.rmtree(private, ignore_errors=True)  # nothing an earlier worker left there
        if shared.is_dir():
            shutil.copytree(shared, private, symlinks=True)  # links copied, never followed


def keep_build(candidate: Path, caches: dict[str, tuple[Path, Path]]) -> None:
    """After the judgement, what an isolated worker compiled of the candidate's content goes
    back to the judge's folders, under that content's key, which the judge computed from
    the candidate's files itself: whatever the worker wrote there is only ever loaded by a
    later worker judging the same content, inside the same confinement."""
    for shared, private in _places(candidate, caches):
        if not private.is_dir() or not any(private.iterdir()):
            continue
        staging = shared.with_name(f".{shared.name}.{os.getpid()}")
        shutil.rmtree(staging, ignore_errors=True)
        staging.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(private, staging, symlinks=True)
        shutil.rmtree(shared, ignore_errors=True)
        try:
            os.replace(staging, shared)
        except OSError:  # another judgement of the same content put its copy there first
            shutil.rmtree(staging, ignore_errors=True)


def _places(candidate: Path, caches: dict[str, tuple[Path, Path]]) -> list[tuple[Path, Path]]:
    """(the judge's folder, the worker's) for this content: `load_inline` builds by content
    under their root in both (the worker's is mounted where the judge's is), Triton's cache
    as a whole folder of the worker's."""
    key = content_key(candidate)
    found = []
    if "builds" in caches:
        shared, private = caches["builds"]
        found.append((shared / "by-content" / key, private / "by-content" / key))
    if "triton" in caches:
        shared, private = caches["triton"]
        found.append((shared / key, private))
    return found
