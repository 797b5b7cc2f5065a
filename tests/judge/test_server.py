"""The warm judge behind a Unix socket, as `cudaopt verify` reaches it inside an agent run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from cudaopt.judge import JudgeOptions, JudgePool, Status, worker_env
from cudaopt.judge.serving.server import JudgeServer

ZOO = Path(__file__).parent / "zoo"


def test_cli_verify_goes_through_the_running_server(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    shutil.copy(ZOO / "task.py", workspace / "model.py")
    shutil.copy(ZOO / "correct.py", workspace / "model_new.py")
    shutil.copytree(ZOO / "kernels", workspace / "kernels")
    pool = JudgePool(worker_env(JudgeOptions()))
    server = JudgeServer(tmp_path / "judge.sock", pool, workspace, JudgeOptions(device="cpu"))
    server.start()
    env = {**os.environ, "CUDAOPT_JUDGE_SOCKET": str(tmp_path / "judge.sock")}
    try:
        for _ in range(2):
            proc = subprocess.run([sys.executable, "-m", "cudaopt.cli", "verify", "--device",
                                   "cpu", "--json", "v.json"], cwd=workspace, env=env,
                                  capture_output=True, text=True, timeout=600)
            assert proc.returncode == 0, proc.stdout + proc.stderr
            assert json.loads((workspace / "v.json").read_text())["correct"] is True
        reference, _ = pool.references(workspace / "model.py", "cpu")
        assert reference is not None and reference.worker.alive  # warm between the two
    finally:
        server.close()
        pool.close()


def test_server_refuses_files_outside_its_workspace(tmp_path: Path) -> None:
    from cudaopt.judge.serving.client import remote_check

    pool = JudgePool(worker_env(JudgeOptions()))
    server = JudgeServer(tmp_path / "judge.sock", pool, tmp_path / "ws")
    server.start()
    try:
        verdict = remote_check(tmp_path / "judge.sock", ZOO / "task.py", ZOO / "correct.py",
                               JudgeOptions(device="cpu"))
        assert verdict.status is Status.BAD_INPUT and "outside the workspace" in verdict.error
    finally:
        server.close()
        pool.close()
    assert remote_check(tmp_path / "judge.sock", ZOO / "task.py", ZOO / "correct.py",
                        JudgeOptions()) is None  # no server: the caller judges locally
