"""CUDA outputs reach the comparing worker by IPC handle, and by file when IPC is off."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cudaopt.judge import JudgeOptions, Status, check, worker_env
from cudaopt.judge.workers.pool import JudgePool

from ..conftest import EXAMPLES

pytestmark = pytest.mark.gpu
EX = EXAMPLES / "fused_swish_cuda"


def _wrong_copy(tmp_path: Path) -> Path:
    shutil.copy(EX / "model_new.py", tmp_path / "model_new.py")
    shutil.copytree(EX / "kernels", tmp_path / "kernels")
    cu = tmp_path / "kernels" / "fused_swish.cu"
    cu.write_text(cu.read_text().replace("y[i] = v;", "v.w += 0.5f; y[i] = v;"))
    return tmp_path / "model_new.py"


@pytest.mark.parametrize("share", [True, False], ids=["ipc", "files"])
def test_right_and_wrong_outputs_are_told_apart(tmp_path: Path, share: bool) -> None:
    opts = JudgeOptions(device="cuda", time_budget_s=2.0)
    pool = JudgePool(worker_env(opts))
    pool.share_cuda = share
    try:
        right = check(EX / "model.py", EX / "model_new.py", opts, pool=pool)
        assert right.status is Status.OK, right.error or right.violations
        wrong = check(EX / "model.py", _wrong_copy(tmp_path), opts, pool=pool)
        assert wrong.status is Status.WRONG, wrong.error or wrong.violations
        assert "elements differ" in "\n".join(wrong.mismatch)
        assert pool.share_cuda is share  # IPC worked on this machine, or was never tried
    finally:
        pool.close()


def test_a_forged_handle_is_refused_not_read(tmp_path: Path) -> None:
    """A handle the candidate made up must fail to open cleanly, in a live process."""
    code = (
        "import torch\n"
        "from cudaopt.judge.workers import ipc\n"
        "from cudaopt.judge.workers.transfer import read_outputs\n"
        "torch.empty(1, device='cuda')\n"
        "leaf = {'dtype': 'torch.float32', 'shape': [4], 'ipc': 'ab' * 64, 'offset': 0,\n"
        "        'nbytes': 16}\n"
        "m = {'skeleton': {'tensor': 'out'}, 'tensors': {'out': leaf}}\n"
        "try:\n"
        "    with read_outputs(m, torch.device('cuda')):\n"
        "        raise SystemExit('opened')\n"
        "except ipc.OpenFailed as exc:\n"
        "    print('refused', exc)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0 and "refused" in proc.stdout, proc.stdout + proc.stderr
