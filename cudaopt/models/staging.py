"""Accepted kernels staged by content, so one build serves every use of the same kernel.

The build folder's ninja file names its sources by absolute path, so the same kernel found
in a run folder, a branch checkout and the whole-model candidate would build three times.
Judging, swapping and the whole-model build all use one copy under the user cache instead,
named by the hash of model_new.py and kernels/: a fresh checkout of a kernel built before
builds nothing.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from cudaopt.judge import KERNEL_SUFFIXES
from cudaopt.models.sources import Source

_KERNEL_FILES = (*KERNEL_SUFFIXES, ".h", ".hpp", ".cuh", ".inl")


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cudaopt" / "kernels"


def _files(src: Source) -> list[Path]:
    kernels = sorted(p for p in src.kernels.iterdir() if p.is_file()
                     and p.suffix in _KERNEL_FILES) if src.kernels else []
    return [src.model_new, *kernels]


def stage(src: Source) -> Source:
    """`src` with model_new.py and kernels/ read from their staged copy."""
    files = _files(src)
    digest = hashlib.sha256()
    for path in files:
        digest.update(f"{path.relative_to(src.folder)}\0".encode() + path.read_bytes() + b"\0")
    home = cache_root() / digest.hexdigest()[:20]
    if not (home / "model_new.py").is_file():
        home.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".stage-", dir=home.parent))
        for path in files:
            target = tmp / path.relative_to(src.folder)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        try:
            tmp.rename(home)  # atomic: a concurrent stager finds a whole copy or none
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
    kernels = home / "kernels"
    return dataclasses.replace(src, model_new=home / "model_new.py",
                               kernels=kernels if kernels.is_dir() else None)
