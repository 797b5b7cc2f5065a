"""The judge's per-user cache folder, and the compilers' caches inside it.

torch.compile's artefacts (inductor, triton) and the candidates' `load_inline` builds are
reused across runs and judgements, so a baseline traced once or a kernel compiled once is
not compiled again; every process that compiles for a judgement, the worker processes and
the build done ahead alike, is started with the same caches (`worker_env`), or one would
rebuild what the other built.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from cudaopt.judge.verdict.options import JudgeOptions


def cache_root(options: JudgeOptions) -> Path:
    """Per-user cache for torch.compile artifacts and load_inline builds, reused across runs."""
    if options.cache_dir:
        return options.cache_dir
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cudaopt"


def worker_env(options: JudgeOptions) -> dict[str, str]:
    cache = cache_root(options)
    env = {
        "TORCHINDUCTOR_CACHE_DIR": str(cache / "inductor"),
        "TORCH_EXTENSIONS_DIR": str(cache / "torch_extensions"),
        "TRITON_CACHE_DIR": str(cache / "triton"),
    }
    return {k: os.environ.get(k, v) for k, v in env.items()}


def prune_builds(folder: Path, keep: int) -> None:
    """Every edit of a candidate is new content: keep the `keep` most recently used builds
    in `folder`, and never one used in the last hour (a judgement may be loading it)."""
    try:
        builds = sorted(folder.iterdir(), key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return
    stale = time.time() - 3600
    for old in builds[keep:]:
        try:
            if old.stat().st_mtime < stale:
                shutil.rmtree(old, ignore_errors=True)
        except OSError:
            pass
