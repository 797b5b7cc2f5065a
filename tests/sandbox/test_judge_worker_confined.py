"""In an agent run the judge's candidate worker imports model-written code: it runs inside
the sandbox too, with a scrubbed environment, and still judges correctly."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cudaopt.judge import JudgeOptions, JudgePool, Status, check, worker_env
from cudaopt.sandbox import resolve_sandbox

ZOO = Path(__file__).resolve().parent.parent / "judge" / "zoo"

PROBE = '''
import os
import pathlib

import torch
import torch.nn as nn

try:  # confined, this lands in the sandbox's private /tmp or fails: either way not on the host
    pathlib.Path({outside!r}).write_text("written by the candidate")
except OSError:
    pass
leaked = [k for k in os.environ if k.endswith("_API_KEY")]
assert not leaked, leaked


class ModelNew(nn.Module):
    def __init__(self, features, scale):
        super().__init__()
        self.bias = nn.Parameter(torch.empty(features))
        self.scale = scale

    def forward(self, x):
        return torch.clamp(x * torch.sigmoid(x) * self.scale + self.bias, -1.0, 1.0)
'''


@pytest.mark.usefixtures("bwrap_ok")
def test_candidate_worker_runs_confined(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "outside.txt"
    workspace.mkdir()
    (workspace / "model.py").write_text((ZOO / "task.py").read_text())
    (workspace / "model_new.py").write_text(PROBE.format(outside=str(outside)))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-must-not-leak-0123456789")
    box = resolve_sandbox("bwrap")

    def wrapper(argv, env, writable):  # noqa: ANN001, ANN202
        return box.wrap_process(argv, env, workspace, writable)

    opts = JudgeOptions(device="cpu", profile=False, allow=["*"])
    pool = JudgePool(worker_env(opts), keep_warm=False, wrapper=wrapper, confined=True)
    try:
        verdict = check(workspace / "model.py", workspace / "model_new.py", opts, pool=pool)
    finally:
        pool.close()
    assert verdict.status is Status.OK, verdict.error
    assert verdict.isolated and verdict.isolation == "the run's sandbox"
    assert not outside.exists()
    assert os.environ["OPENAI_API_KEY"]  # the parent keeps its key; only the worker lost it


@pytest.mark.usefixtures("bwrap_ok")
def test_unconfined_worker_would_have_seen_both(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe itself works: without the wrapper it writes the file and sees the key."""
    workspace, outside = tmp_path / "ws", tmp_path / "outside.txt"
    workspace.mkdir()
    (workspace / "model.py").write_text((ZOO / "task.py").read_text())
    (workspace / "model_new.py").write_text(PROBE.format(outside=str(outside)))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-must-not-leak-0123456789")
    verdict = check(workspace / "model.py", workspace / "model_new.py",
                    JudgeOptions(device="cpu", profile=False, allow=["*"], isolation="off"))
    assert verdict.status is Status.CRASH and "OPENAI_API_KEY" in verdict.error
    assert outside.read_text() == "written by the candidate"
