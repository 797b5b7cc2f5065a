"""The binding header precompiled: asked for by a cache's second binding compile, made in a
process of its own, used by the builds after it (whose modules work), and never a reason to
compile a folder's unchanged binding again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cudaopt.judge import build_kernels
from cudaopt.judge.building import pch

BINDING = """#include <cstdint>
#include "cudaopt_binding.h"

extern "C" void times_k(const float* x, float* y, int64_t n);

static torch::Tensor times(torch::Tensor x) {
  auto y = torch::empty_like(x);
  times_k(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
  return y;
}

CUDAOPT_BIND(m) { m.def("times", &times); }
"""
KERNEL = """#include <cstdint>
extern "C" void times_k(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = FACTOR * x[i];
}
"""


def _kernels(folder: Path, factor: int) -> Path:
    folder.mkdir(parents=True)
    (folder / "times_binding.cpp").write_text(BINDING)
    (folder / "times.cpp").write_text(KERNEL.replace("FACTOR", f"{factor}.0f"))
    return folder


def _times(build: Path) -> list[float]:
    code = ("import sys, torch; sys.path.insert(0, sys.argv[1]); import cuda_extension; "
            "print(cuda_extension.times(torch.tensor([1.0, 2.0])).tolist())")
    out = subprocess.run([sys.executable, "-c", code, str(build)], capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out)


@pytest.mark.skipif(not pch.is_gcc(os.environ.get("CXX", "c++")), reason="g++ only")
def test_the_header_is_asked_for_once_made_aside_and_used_after(tmp_path: Path) -> None:
    store = tmp_path / "cache" / "kernels"
    first = build_kernels(_kernels(tmp_path / "a", 2), tmp_path / "build-a", 600, store)
    assert first.ok and "times_binding.o" in first.rebuilt, first.log
    [where] = (tmp_path / "cache" / "pch").iterdir()
    assert (where / pch.ASKED).exists() and pch.ready(where) is None  # one compile: no header

    second = build_kernels(_kernels(tmp_path / "b", 3), tmp_path / "build-b", 600, store)
    assert second.ok and "times_binding.o" in second.rebuilt, second.log
    assert pch.ready(where) is None  # being made, or the build waited for it
    deadline = time.monotonic() + 300
    while pch.ready(where) is None and time.monotonic() < deadline:
        time.sleep(0.5)  # made by a process of its own, not by the build
    assert pch.ready(where) is not None

    third = build_kernels(_kernels(tmp_path / "c", 5), tmp_path / "build-c", 600, store)
    assert third.ok and "times_binding.o" in third.rebuilt, third.log
    assert f"-include {where / pch.HEADER}" in third.log
    assert _times(tmp_path / "build-c") == [5.0, 10.0]

    # a folder built before the header was there keeps its binding through a kernel's edit
    kernel = tmp_path / "a" / "times.cpp"
    kernel.write_text(kernel.read_text().replace("2.0f", "7.0f"))
    edited = build_kernels(tmp_path / "a", tmp_path / "build-a", 600, store)
    assert edited.ok and edited.rebuilt == ["times.o"], edited.log
    assert _times(tmp_path / "build-a") == [7.0, 14.0]


def test_only_a_source_that_includes_the_header_first_is_given_it(tmp_path: Path) -> None:
    """A definition, condition or local header before it could change what it means, and a
    folder with a header of that name of its own means its own."""
    cases = {
        "first.cpp": '#include "cudaopt_binding.h"\nint x;\n',
        "after_toolchain.cpp": "#pragma once\n#include <cstdint>\n#include <cuda_runtime.h>\n"
                               '// a comment\n#include "cudaopt_binding.h"\n',
        "defines.cpp": '#define TORCH_FLAG 1\n#include "cudaopt_binding.h"\n',
        "conditional.cpp": '#ifdef X\n#endif\n#include "cudaopt_binding.h"\n',
        "local.cpp": '#include "mine.h"\n#include "cudaopt_binding.h"\n',
        "none.cpp": "#include <torch/extension.h>\n",
    }
    given = set()
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
        if pch.applies(tmp_path / name):
            given.add(name)
    assert given == {"first.cpp", "after_toolchain.cpp"}
    (tmp_path / pch.HEADER).write_text("// a copy of its own, which its #include finds\n")
    assert not pch.applies(tmp_path / "first.cpp")


def test_a_new_header_prunes_old_ones_but_never_one_in_use(tmp_path: Path) -> None:
    """About 500 MB each: a header made for new flags (an upgrade) leaves the `KEEP` newest,
    and one a build used in the last hour stays whatever its age."""
    compiler = tmp_path / "cxx"  # writes its output: only the folders' fate is tested here
    compiler.write_text('#!/bin/sh\nfor a; do out=$a; done; : > "$out"\n')
    compiler.chmod(0o755)
    root, old = tmp_path / "pch", time.time() - 3 * 3600
    for i in range(6):
        (root / f"old{i}").mkdir(parents=True)
        os.utime(root / f"old{i}", (old + i, old + i))
    pch.used(root / "old0")  # the oldest, but a build just used it
    new = root / "new"
    new.mkdir()
    header = Path(pch.__file__).parent / "data" / pch.HEADER
    assert pch._make(new, header, str(compiler), "-O3") == 0
    assert pch.ready(new) is not None
    kept = {p.name for p in root.iterdir()}
    assert kept == {"new", "old0", "old5", "old4"}, kept
