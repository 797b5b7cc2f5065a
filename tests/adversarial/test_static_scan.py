"""The static scan, the second line: plainly written hacks are flagged before anything runs
(the candidates in candidates/ are written to slip past it, to prove the runtime checks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudaopt.judge.checks.scan import scan_candidate

PYTHON = [
    ("import time\ntime.perf_counter = lambda: 0.0\n", "violation", "assigns to a library"),
    ("import torch\nsetattr(torch, 'sigmoid', abs)\n", "violation", "patches a library"),
    ("import cudaopt.judge.workers.tensors\n", "violation", "imports the judge"),
    ("import importlib\nimportlib.import_module('cudaopt.judge.checks.guard')\n", "violation",
     "imports the judge"),
    ("import sys\nsys.setprofile(print)\n", "violation", "installs an interpreter hook"),
    ("import gc\nobjs = gc.get_objects()\n", "violation", "introspects"),
    ("def forward(x):\n    try:\n        return x\n    except RuntimeError:\n        return x\n",
     "warning", "try/except"),
    ("from concurrent.futures import ThreadPoolExecutor\n", "warning", "threads"),
    ("class Lazy:\n    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):\n"
     "        pass\n", "warning", "tensor subclass"),
]
NATIVE = [
    ("torch::Tensor f(torch::Tensor x) { return at::native::sigmoid(x); }\n", "violation",
     "bypassing the dispatcher"),
    ("void f() { c10::impl::ExcludeDispatchKeyGuard g(c10::DispatchKey::Python); }\n",
     "violation", "changes dispatch keys"),
    ("void f() { std::thread([] {}).detach(); }\n", "warning", "native threads"),
    ("torch::Tensor f(torch::Tensor x) { return torch::sigmoid(x); }\n", "warning",
     "torch::sigmoid"),
]


def _findings(tmp_path: Path, source: str, native: bool) -> list[tuple[str, str]]:
    candidate = tmp_path / "model_new.py"
    candidate.write_text("import torch\n" if native else source)
    if native:
        (tmp_path / "kernels").mkdir()
        (tmp_path / "kernels" / "k.cpp").write_text(source)
    return [(f.severity, f.text) for f in scan_candidate(candidate)]


@pytest.mark.parametrize(("source", "severity", "why"), PYTHON)
def test_python_patterns_are_flagged(tmp_path: Path, source: str, severity: str,
                                     why: str) -> None:
    found = _findings(tmp_path, source, native=False)
    assert any(s == severity and why in text for s, text in found), found


@pytest.mark.parametrize(("source", "severity", "why"), NATIVE)
def test_native_patterns_are_flagged(tmp_path: Path, source: str, severity: str,
                                     why: str) -> None:
    found = _findings(tmp_path, source, native=True)
    assert any(s == severity and why in text for s, text in found), found
