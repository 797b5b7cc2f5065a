"""A scripted session on the GPU that writes a racy kernel first and an honest one second:
the loop must keep and commit the honest one, however fast the racy one looked."""

from __future__ import annotations

import shutil
from pathlib import Path

import git
import pytest
import torch

from cudaopt.agent.config import Limits, RunConfig
from cudaopt.agent.run import start_run
from cudaopt.judge import JudgeOptions
from cudaopt.runs import gitops
from tests.agent.conftest import Events
from tests.fakeopenai import FakeOpenAI, call, say

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]
CANDIDATES = Path(__file__).resolve().parent.parent / "adversarial" / "gpu" / "candidates"
KERNELS = ("kernels/diag.cu", "kernels/matmul.cu", "kernels/streams_binding.cpp")


def test_session_with_a_racy_then_an_honest_kernel_commits_the_honest_one(
        tmp_path: Path) -> None:
    folder = tmp_path / "diag"
    folder.mkdir()
    shutil.copy(CANDIDATES / "diag_task.py", folder / "model.py")
    repo = git.Repo.init(folder)
    with repo.config_writer() as cfg:
        cfg.set_value("user", "name", "Test").set_value("user", "email", "test@example.com")
    repo.index.add(["model.py"])
    repo.index.commit("task")
    racy = (CANDIDATES / "diag_forked_stream.py").read_text()
    honest = (CANDIDATES / "diag_honest.py").read_text()
    script = [
        *(call("write", path=n, content=(CANDIDATES / n).read_text()) for n in KERNELS),
        call("write", path="model_new.py", content=racy),
        call("bash", command="cudaopt profile --device cuda"),
        call("write", path="model_new.py", content=honest),
        call("bash", command="cudaopt profile --device cuda"),
        say("Done."),
        say("Done."),
    ]
    with FakeOpenAI(script) as server:
        config = RunConfig(model="openai/fake-kernel-model", device="cuda", api_base=server.url,
                           limits=Limits(max_steps=14), judge=JudgeOptions(device="cuda"))
        result = start_run(folder / "model.py", config, Events())
    best = result.run_dir / "best" / "model_new.py"
    assert best.read_text() == honest, best.read_text()
    assert result.accepted, result.final
    done = gitops.commit_accepted(folder / "model.py", result.run_dir / "best", result.final,
                                  result.meta, "cudaopt/diag")
    committed = repo.git.show(f"{done.branch}:model_new.py")
    assert "diag_current" in committed and "diag_forked" not in committed
