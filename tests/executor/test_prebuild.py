"""JIT (`load_inline`) candidates are built on the executor's CPU pool before a slot takes
them, and the slot's candidate worker finds that build done instead of compiling again."""

from __future__ import annotations

import time
from pathlib import Path

from cudaopt.executor import Job, LocalExecutor, Sources
from cudaopt.executor.devlock import device_lock
from cudaopt.judge import JudgeOptions
from cudaopt.judge.building.inline_build import build_ahead, jit_builds
from tests.conftest import ROOT

TASK = ROOT / "tests" / "judge" / "zoo" / "task.py"
INLINE = ROOT / "tests" / "judge" / "inline" / "swish_inline.py"


def _compiles(cache: Path) -> dict[str, int]:
    """How often ninja compiled each object of every JIT extension under `cache`."""
    counts: dict[str, int] = {}
    for log in cache.rglob(".ninja_log"):
        for line in log.read_text().splitlines()[1:]:
            target = line.split("\t")[3]
            if target.endswith(".o"):
                key = f"{log.parent.name}/{target}"
                counts[key] = counts.get(key, 0) + 1
    return counts


def _compiling(cache: Path, timeout_s: float = 300.0) -> bool:
    """Waits until a JIT build under `cache` is compiling: its build file written and no
    object done yet (the slot's later import of a finished build finds its log there)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if any(not (f.parent / ".ninja_log").exists() for f in cache.rglob("build.ninja")):
            return True
        time.sleep(0.02)
    return False


def test_the_slot_imports_what_was_built_ahead(tmp_path: Path) -> None:
    """Built once in all: ahead, on the CPU pool, holding the CPU slot's device lock (a
    build beside the slot's timing would take its cores); the slot's judge imports that
    build."""
    cache = tmp_path / "cache"
    options = JudgeOptions(device="cpu", trials=2, profile=False, cache_dir=cache)
    sources = Sources.from_files(TASK, INLINE)
    with LocalExecutor("cpu", root=tmp_path / "exec") as executor:
        future = executor.submit(Job("inline", "judge", sources, options))
        assert _compiling(cache), "no build started"
        assert device_lock(executor.root, executor.slots[0]).waiting_on() is not None
        result = future.result(timeout=600)
    assert result.infra_error is None, result.infra_error
    assert result.verdict["correct"], result.verdict
    assert result.extra["built_ahead"] == ["jit"]
    compiled = _compiles(cache)
    assert compiled and set(compiled.values()) == {1}, compiled


def test_a_candidate_that_fails_to_import_fails_ahead_quietly(tmp_path: Path) -> None:
    broken = tmp_path / "model_new.py"
    broken.write_text(INLINE.read_text().replace("#include <cmath>", "#include <no_such.h>"))
    assert jit_builds(broken)
    assert not build_ahead(broken, JudgeOptions(device="cpu", cache_dir=tmp_path / "cache"))


def test_a_candidate_without_jit_builds_has_nothing_to_build(tmp_path: Path) -> None:
    plain = tmp_path / "model_new.py"
    plain.write_text("import torch\n\nclass ModelNew(torch.nn.Module):\n    pass\n")
    assert not jit_builds(plain)
