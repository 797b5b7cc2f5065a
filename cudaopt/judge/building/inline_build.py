"""`load_inline` builds done ahead of a judgement, on a CPU, with no GPU in sight.

KernelBench's candidates compile their CUDA with `torch.utils.cpp_extension.load_inline`
when imported: 40-50 s of nvcc on an H200 host, inside the candidate worker, while the GPU
waits. Importing the candidate once beforehand, in a process of its own (sandboxed like the
candidate worker, CUDA hidden so nothing it does at import reaches a GPU), leaves the build
in the folder the worker will look in (`extdir`), so the worker's import finds it done. A
failure here is nobody's verdict: the worker's own import re-finds and reports it.

    python -m cudaopt.judge.building.inline_build CANDIDATE [BUILD_DIR]
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from cudaopt.judge.building.caches import worker_env
from cudaopt.judge.verdict.options import JudgeOptions

#: How a candidate asks for a JIT build; a candidate without it has nothing to build ahead.
JIT = re.compile(r"load_inline|cpp_extension\.load\b|from torch\.utils\.cpp_extension import")
Wrap = Callable[[list[str], dict[str, str]], tuple[list[str], dict[str, str]]]


def jit_builds(candidate: Path) -> bool:
    """Whether the candidate (or a Python file beside it or in its kernels/) JIT-builds."""
    folder = candidate.parent
    files = [candidate, *folder.glob("*.py"), *(folder / "kernels").glob("*.py")]
    for path in files:
        try:
            if JIT.search(path.read_text(errors="replace")):
                return True
        except OSError:
            continue
    return False


def build_ahead(candidate: Path, options: JudgeOptions, build_dir: Path | None = None,
                wrap: Wrap | None = None, env: dict[str, str] | None = None) -> bool:
    """Import `candidate` once so its JIT extensions are built; True when the import worked.
    `env` is added to this process's environment (e.g. TORCH_CUDA_ARCH_LIST, which must be
    what the judging worker gets, or its import rebuilds); `wrap` confines the process."""
    full_env = {**os.environ, **worker_env(options), **(env or {}), "CUDA_VISIBLE_DEVICES": ""}
    argv = [sys.executable, "-m", "cudaopt.judge.building.inline_build", str(candidate)]
    if build_dir is not None:
        argv.append(str(build_dir))
    if wrap is not None:
        argv, full_env = wrap(argv, full_env)
    proc = subprocess.Popen(argv, env=full_env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        return proc.wait(timeout=options.build_timeout_s) == 0
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return False


def main(argv: list[str]) -> int:
    from cudaopt.judge.building.extdir import use_content_dir
    from cudaopt.judge.building.loading import load_module

    candidate = Path(argv[0])
    if len(argv) > 1:
        sys.path.insert(0, argv[1])
    use_content_dir(candidate)
    load_module(candidate, "model_new")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
