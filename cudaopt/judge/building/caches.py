"""The judge's per-user cache folder, the compilers' caches inside it, and torch.compile's use
of them (its counters, its first call past a broken build in them).

torch.compile's artefacts (inductor, triton) and the candidates' `load_inline` builds are
reused across runs and judgements, so a baseline traced once or a kernel compiled once is
not compiled again; every process that compiles for a judgement, the worker processes and
the build done ahead alike, is started with the same caches (`worker_env`), or one would
rebuild what the other built.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path
from typing import Any

from cudaopt.judge.verdict.options import JudgeOptions


def cache_root(options: JudgeOptions) -> Path:
    """Per-user cache for torch.compile artifacts and load_inline builds, reused across runs."""
    if options.cache_dir:
        return options.cache_dir
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cudaopt"


#: The compilers' cache settings the user gave this process, read before anything here
#: compiled: torch.compile's first compile in a process sets TORCHINDUCTOR_CACHE_DIR to its
#: default, which must not then stand for the user's choice.
_USER_CACHES = {name: os.environ[name] for name in (
    "TORCHINDUCTOR_CACHE_DIR", "TORCH_EXTENSIONS_DIR", "TRITON_CACHE_DIR") if name in os.environ}


def worker_env(options: JudgeOptions) -> dict[str, str]:
    """The caches' folders for the processes that compile: `options.cache_dir` when given,
    else the user's own settings, else folders in the judge's per-user cache."""
    cache = cache_root(options)
    env = {
        "TORCHINDUCTOR_CACHE_DIR": str(cache / "inductor"),
        "TORCH_EXTENSIONS_DIR": str(cache / "torch_extensions"),
        "TRITON_CACHE_DIR": str(cache / "triton"),
    }
    if options.cache_dir:
        return env
    return {k: _USER_CACHES.get(k, v) for k, v in env.items()}


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


_LIBRARY = re.compile(r"(/\S+?\.so)\b")


def drop_broken_builds(error: BaseException) -> list[Path]:
    """Delete the compiled libraries inductor's cache could not load, as `error` names them
    ("file too short"), and forget what this process loaded from its cache; the next
    compile builds them again. Inductor builds a kernel library in place and later trusts
    any file at that path: a worker killed while it built one (a judgement's time limit,
    a bench stopped) left an empty library that failed every later compile of that task,
    whose judgements then said the task itself was broken. Only files inside the inductor
    cache folder are touched; none found, nothing is done (an empty list)."""
    root = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if not root:
        return []
    root_path = Path(root).resolve()
    dropped = []
    for name in dict.fromkeys(_LIBRARY.findall(str(error))):
        path = Path(name).resolve()
        if root_path in path.parents and path.is_file():
            key = path.name.split(".")[0]  # the library, its sources and its objects
            for part in path.parent.glob(f"{key}*"):
                if part.is_dir():
                    shutil.rmtree(part, ignore_errors=True)
                else:
                    part.unlink(missing_ok=True)
            dropped.append(path)
    if dropped:
        from torch._inductor import codecache

        for name in ("CppPythonBindingsCodeCache", "CppCodeCache", "PyCodeCache"):
            clear = getattr(getattr(codecache, name, None), "cache_clear", None)
            if clear is not None:
                clear()
    return dropped


def prewarm_compile() -> None:
    """What torch.compile costs a fresh process before it compiles anything: importing
    dynamo, inductor and triton's code generator, 9.4-9.5 s on an H200 host, done while this
    worker waits for its task (it was started ahead). Only imports: compiling anything here,
    even a one-line function on the CPU, built inductor's C++ toolchain state anew in every
    process, 54-64 s on that host (benchmarks/baseline_start.py), which made every fresh
    baseline cost about a minute. Nothing here touches a GPU another judge may be timing. A
    failure only means the real compile pays it."""
    try:
        import torch._dynamo  # noqa: F401
        import torch._inductor.compile_fx  # noqa: F401
        import torch._inductor.lowering  # noqa: F401

        try:
            import torch._inductor.codegen.triton  # noqa: F401
        except ImportError:
            pass  # no triton: a CPU-only machine
    except Exception:  # noqa: BLE001
        pass


def compile_counters(since: dict[str, int] | None = None) -> dict[str, int]:
    """torch.compile's cache and work counters (inductor's FX graph cache, AOT autograd's
    cache, graphs compiled), less `since`: whether a compile traced and compiled or was
    served from the on-disk caches."""
    from torch._dynamo.utils import counters

    names = ("fxgraph_cache_hit", "fxgraph_cache_miss", "fxgraph_cache_bypass")
    found = {name: int(counters["inductor"].get(name, 0)) for name in names}
    found.update({f"aot_{k}": int(v) for k, v in counters["aot_autograd"].items()
                  if k.startswith("autograd_cache")})
    found["graphs"] = int(counters["stats"].get("unique_graphs", 0))
    since = since or {}
    return {k: v - since.get(k, 0) for k, v in found.items() if v - since.get(k, 0)}


def first_call(compiled: Any, inputs: list[Any]) -> Any:
    """torch.compile's first call, compiled once more after a broken library in its cache
    was dropped (see `drop_broken_builds`): from the model, not from the cached
    graph, whose stored code inductor does not rebuild with the flags it was built with."""
    try:
        return compiled(*inputs)
    except Exception as exc:  # noqa: BLE001 - re-raised unless a broken build explains it
        if not drop_broken_builds(exc):
            raise
        import torch

        torch._dynamo.reset()
        with torch._inductor.config.patch(force_disable_caches=True):
            return compiled(*inputs)
