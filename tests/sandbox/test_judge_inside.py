"""The judge's commands work from inside the sandbox: the package is readable, the scratch
folder writable, caches and builds land in the workspace, and kernels build and run (on
the GPU too: its device nodes are bound in)."""

from __future__ import annotations

import json
import shutil

import pytest

from cudaopt.agent.environment.layout import install_cli, shell_env
from cudaopt.sandbox import resolve_sandbox
from tests.conftest import EXAMPLES
from tests.sandbox.conftest import Place

pytestmark = pytest.mark.usefixtures("bwrap_ok")


def verify_inside(place: Place, example: str, device: str) -> str:
    shutil.copytree(EXAMPLES / example, place.workspace, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns(".cudaopt", "build", "__pycache__"))
    bin_dir = place.workspace.parent / "bin"
    shim = install_cli(bin_dir)
    sandbox = resolve_sandbox("bwrap").with_paths([bin_dir], [place.records], ("model.py",))
    env = shell_env(bin_dir, place.records, device)
    command = f"command -v cudaopt && cudaopt verify --device {device} --trials 2"
    result = sandbox.run(command, place.workspace, env, timeout_s=600)
    assert result.exit_code == 0 and "correct and clean" in result.output, result.output
    assert result.output.startswith(f"{shim}\n")  # the run's own front end, not an install
    verdict = json.loads((place.records / "001" / "verdict.json").read_text())
    assert verdict["correct"] and verdict["device"] == device
    assert (place.workspace / ".cudaopt" / f"build-{device}").is_dir()
    assert sorted(p.name for p in place.home.iterdir()) == [".ssh", "proj"]  # home untouched
    return result.output


@pytest.mark.slow
def test_verify_cpu_example_inside_the_sandbox(place: Place) -> None:
    verify_inside(place, "fused_swish_cpu", "cpu")


@pytest.mark.gpu
def test_cuda_kernel_builds_and_runs_inside_the_sandbox(place: Place) -> None:
    verify_inside(place, "fused_swish_cuda", "cuda")
