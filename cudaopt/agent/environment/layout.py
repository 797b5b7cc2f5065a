"""Lay out the agent's workspace from `templates/` and `skills/`, and the environment its
shell runs in (the judge's commands on PATH, candidates recorded into the run)."""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

from cudaopt import ROOT
from cudaopt.agent import prompts
from cudaopt.config import BACKENDS

#: What the skill and the prompts say per language the agent writes (the device's, or
#: Triton's): kernel language, file suffix, libraries allowed.
LANGUAGE_VALUES = {
    "cuda": {
        "kernel_language": "CUDA",
        "kernel_ext": "cu",
        "fence_lang": "cuda",
        "library_note": "cuBLAS / cuBLASLt for GEMMs and cuDNN for convolutions, called "
        "from your own C++/CUDA code (`cublasSgemm`, `cublasGemmEx`, "
        "`cudnnConvolutionForward`). Reaching them through PyTorch (`torch::matmul`, "
        "`at::conv2d`) is a violation.",
    },
    "triton": {
        "kernel_language": "Triton",
        "kernel_ext": "py",
        "fence_lang": "python",
        "library_note": "none: every kernel is your own `@triton.jit` function.",
    },
    "cpu": {
        "kernel_language": "C++",
        "kernel_ext": "cpp",
        "fence_lang": "cpp",
        "library_note": "on CPU, none beyond the C++ standard library: write the loops "
        "yourself. Reaching BLAS through PyTorch (`torch::matmul`) is a violation.",
    },
}
READ_ONLY = ("model.py", "skills")


class BackendError(ValueError):
    """A backend this device cannot run: said before the run spends anything."""


def check_backend(backend: str, device: str) -> None:
    """Before a run spends anything: the backend exists and the device can run it."""
    if backend not in BACKENDS:
        raise BackendError(f"unknown backend {backend!r}: {' or '.join(BACKENDS)}")
    if backend == "triton" and device != "cuda":
        raise BackendError(f"Triton kernels need a CUDA device and this run is on {device}: "
                           "use --backend cuda (C++ kernels on the CPU) or run on a GPU")


def skill_values(device: str, target_pct: float, tolerance: float,
                 backend: str = "cuda") -> dict[str, str]:
    """The names the skill and the prompts are filled with. The "cuda" backend on the CPU
    writes C++ (the same loop, the same extension forms)."""
    check_backend(backend, device)
    return {
        "device": device,
        "backend": backend,
        "target_pct": f"{target_pct:g}",
        "tolerance": f"{tolerance:g}",
        **LANGUAGE_VALUES["triton" if backend == "triton" else device],
    }


def create_workspace(workspace: Path, task: Path, values: dict[str, str]) -> None:
    """model.py (read-only copy of the task), a starter model_new.py and skills/, for the
    device and backend `values` name (`skill_values`).

    No empty kernels/ folder: the judge takes a kernels/ folder as sources to build."""
    workspace.mkdir(parents=True, exist_ok=False)
    source = task.read_text()
    (workspace / "model.py").write_text(source)
    (workspace / "model.py").chmod(0o444)
    starter = re.sub(r"\bModel\b", "ModelNew", source)
    triton = values["backend"] == "triton"
    starter_template = "model_new_triton.py.tmpl" if triton else "model_new.py.tmpl"
    (workspace / "model_new.py").write_text(
        prompts.template(starter_template, reference=starter.rstrip()) + "\n"
    )
    skills = workspace / "skills"
    skills.mkdir()
    (skills / "SKILL.md").write_text(prompts.skill(**values) + "\n")
    pattern = "triton*" if triton else f"{values['device']}_*"
    for example in sorted((prompts.SKILLS_DIR / "examples").glob(pattern)):
        shutil.copytree(example, skills / "examples" / example.name)


def install_cli(bin_dir: Path) -> Path:
    """A `cudaopt` command for the agent's shell that runs this very Python and package."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    shim = bin_dir / "cudaopt"
    shim.write_text(prompts.template("cudaopt.sh.tmpl", python=sys.executable, package_root=ROOT))
    shim.chmod(0o755)
    return shim


def shell_env(bin_dir: Path, record_dir: Path, device: str) -> dict[str, str]:
    """The agent shell's environment: judge commands first on PATH, verdicts recorded.

    Credentials are not scrubbed here; the sandbox (issue 6) owns that.
    """
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["CUDAOPT_RECORD_DIR"] = str(record_dir)
    env["CUDAOPT_DEVICE"] = device
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env
