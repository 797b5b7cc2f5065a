"""Ctrl-C keeps the run's state; `--resume` continues the same conversation and workspace."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from cudaopt.agent.run import resume_run, start_run
from cudaopt.cli import app
from cudaopt.judge import Status
from tests.agent.conftest import GOOD_FILES, UNTIMED, Events, source
from tests.fakeopenai import FakeOpenAI, Reply, call, say

pytestmark = pytest.mark.slow  # whole agent runs, each judging real builds


class InterruptAfter(Events):
    """Acts like Ctrl-C after `tools` tool calls."""

    def __init__(self, tools: int) -> None:
        super().__init__()
        self.tools = tools

    def __call__(self, kind: str, data: dict[str, Any]) -> None:
        super().__call__(kind, data)
        if kind == "tool" and len(self.of("tool")) == self.tools:
            raise KeyboardInterrupt


def test_interrupt_then_resume_finishes_the_run(task, config, stage_dir) -> None:
    """Judged without timing: the subject is the state a resumed run picks up (conversation,
    workspace, step count), not the speedup. The kernel is written across both sessions, so
    the one candidate the run ends with is only whole if the workspace carried over."""
    writes = [call("write", path=name, content=source(name)) for name in GOOD_FILES]
    with FakeOpenAI(writes[:2]) as server:
        first = start_run(task, config(server.url, 5, judge=UNTIMED), InterruptAfter(tools=2))
    run = first.run_dir
    assert first.reason == "interrupted" and first.final is None
    meta = json.loads((run / "meta.json").read_text())
    assert meta["status"] == "interrupted" and meta["steps"] == 2

    def resumed(messages: list[dict[str, Any]]) -> Reply:
        assert "interrupted and has been resumed" in messages[-1]["content"]
        assert (run / "workspace" / "kernels" / "prefix_sum_binding.cpp").is_file()
        return writes[2]

    events = Events()
    with FakeOpenAI([resumed, say("Done."), say("Done.")]) as server:
        # the fake server listens on a new port: the endpoint moved
        second = resume_run(run, events, judge=UNTIMED, api_base=server.url, stage_dir=stage_dir)
    assert not server.errors
    assert second.reason == "max_steps" and second.meta.steps == 5
    assert [e["step"] for e in events.of("step")] == [3, 4, 5]
    assert [d["verdict"].status for d in events.of("candidate")] == [Status.OK]
    assert second.final is not None and second.final.clean
    for name in GOOD_FILES:
        assert (run / "best" / name).read_text() == source(name)
    assert json.loads((run / "meta.json").read_text())["status"] == "not_accepted"


def test_cli_resume_continues_the_same_run(task, config, monkeypatch) -> None:
    with FakeOpenAI([call("read", path="model.py")] * 2) as server:
        first = start_run(task, config(server.url), InterruptAfter(tools=1))
    assert first.meta.steps == 1
    monkeypatch.chdir(task.parent)
    with FakeOpenAI([]) as server:  # its workspace was laid out for C++: no other language
        other = CliRunner().invoke(app, ["optimize", "--resume", first.run_dir.name,
                                         "--api-base", server.url, "--sandbox", "none",
                                         "--backend", "triton"])
        assert other.exit_code == 2 and "this run writes cuda kernels" in other.output
        assert not server.requests
    with FakeOpenAI([call("glob", pattern="*.py")] * 3) as server:
        args = [
            "optimize",
            "--resume",
            first.run_dir.name,
            "--api-base",
            server.url,
            "--max-steps",
            "3",
            "--no-commit",
            "--sandbox",
            "none",  # about resuming, not the sandbox: runs without bwrap too
        ]
        result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output  # ran out of steps, nothing accepted
    meta = json.loads((first.run_dir / "meta.json").read_text())
    assert meta["steps"] == 3 and meta["status"] == "not_accepted"
    assert meta["extra"]["stop_reason"] == "max_steps" and meta["device"] == "cpu"
