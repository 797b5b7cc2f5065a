"""The model must answer before step 1; otherwise a clear error, a non-zero exit and no
run left behind that "completes" after every call failed."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cudaopt.agent.errors import PreflightError
from cudaopt.agent.run import start_run
from cudaopt.cli import app


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def no_runs(task: Path) -> bool:
    runs = task.parent / ".cudaopt" / "runs"
    return not runs.exists() or not any(runs.iterdir())


def test_endpoint_down_fails_before_any_run(task: Path, config) -> None:
    with pytest.raises(PreflightError, match="cannot reach"):
        start_run(task, config(closed_port_url()))
    assert no_runs(task)


def test_cli_endpoint_down_exits_2_with_a_clear_message(task: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "optimize",
            str(task),
            "--model",
            "openai/fake",
            "--api-base",
            closed_port_url(),
            "--device",
            "cpu",
            "--sandbox",
            "none",  # about the model, not the sandbox: runs without bwrap too
            "--no-commit",
        ],
    )
    assert result.exit_code == 2, result.output
    assert "cannot reach" in result.output
    assert no_runs(task)


def test_unknown_model_is_named(task: Path, config) -> None:
    with pytest.raises(PreflightError, match="unknown model 'no-such-model'"):
        start_run(task, config(None, model="no-such-model"))


def test_missing_key_says_which(task: Path, config, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    with pytest.raises(PreflightError, match="authentication failed"):
        start_run(task, config(None, model="anthropic/claude-sonnet-4-5"))
    assert no_runs(task)


def test_missing_openai_key_is_an_authentication_failure(
    task: Path, config, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OpenAI's client reports a missing key as a server error; the user must not read
    "cannot reach the provider"."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(PreflightError, match="authentication failed.*OPENAI_API_KEY is not set"):
        start_run(task, config(None, model="openai/gpt-4o"))
    assert no_runs(task)
