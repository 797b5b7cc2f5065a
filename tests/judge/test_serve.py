"""`cudaopt serve`: a warm judge for a folder that `cudaopt check` finds by itself."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ZOO = Path(__file__).parent / "zoo"
SERVED = "judged by the warm judge"


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    (folder / "cand").mkdir(parents=True)
    shutil.copy(ZOO / "task.py", folder / "model.py")
    shutil.copy(ZOO / "correct.py", folder / "cand" / "model_new.py")
    shutil.copytree(ZOO / "kernels", folder / "cand" / "kernels")
    return folder


def _serve(folder: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "cudaopt.cli", "serve", str(folder),
                             "--device", "cpu"], stderr=subprocess.PIPE, text=True)
    pointer = folder / ".cudaopt" / "judge-socket"
    deadline = time.monotonic() + 120
    while not pointer.exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
        time.sleep(0.2)
    return proc


def _check(folder: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "CUDAOPT_JUDGE_SOCKET"}
    proc = subprocess.run(
        [sys.executable, "-m", "cudaopt.cli", "check", "../model.py", "model_new.py",
         "--device", "cpu", "--trace", "--time-budget", "1", "--json", "v.json"],
        cwd=folder / "cand", env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads((folder / "cand" / "v.json").read_text())["correct"] is True
    return proc


def test_checks_under_a_served_folder_use_it_until_it_stops(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    server = _serve(folder)
    try:
        for _ in range(2):
            assert SERVED in _check(folder).stderr
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=60) == 0
        assert "warm judge stopped" in server.stderr.read()
    finally:
        server.kill()
    assert not (folder / ".cudaopt" / "judge-socket").exists()
    assert SERVED not in _check(folder).stderr  # judged here again


def test_a_killed_server_leaves_checks_working(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    server = _serve(folder)
    server.kill()
    server.wait()
    assert (folder / ".cudaopt" / "judge-socket").exists()  # stale, and harmless
    assert SERVED not in _check(folder).stderr
