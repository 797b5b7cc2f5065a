"""Prompt caching: cache markers on the stable prefix for a provider whose caching needs
them (Anthropic's messages API, on a local server), none for one without; what was read
from the cache, what was not, and the price, per step and in the run's record."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from cudaopt.agent.config import Limits
from cudaopt.agent.run import start_run
from cudaopt.cli import app
from cudaopt.cli.live import LiveView
from tests.agent.conftest import Events
from tests.fakeanthropic import FakeAnthropic
from tests.fakeopenai import FakeOpenAI, call

pytestmark = pytest.mark.slow  # whole agent runs

STEPS = [call("read", path="model.py"), call("glob", pattern="*.py"),
         call("bash", command="ls kernels")]


def notes(run_dir: Path, kind: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in (run_dir / "trajectory.jsonl").read_text().splitlines()]
    return [line for line in lines if line.get("note") == kind]


def test_anthropic_gets_cache_markers_and_the_run_counts_cached_tokens(
        task, config, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-dummy-for-the-fake-server")
    events = Events()
    with FakeAnthropic(list(STEPS)) as server:
        result = start_run(task, config(server.url, max_steps=3,
                                        model="anthropic/claude-sonnet-4-5"), events)
    assert not server.errors and result.reason == "max_steps"
    session = [b for b in server.requests if FakeAnthropic.in_session(b)]
    assert len(session) == 3
    for body in session:
        assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
        first_user = body["messages"][0]["content"]
        assert first_user[-1]["cache_control"] == {"type": "ephemeral"}
        assert "cache_control" in json.dumps(body["messages"][-1])
    assert events.of("context")[0]["caching"] is True
    usage = notes(result.run_dir, "usage")
    assert [u["step"] for u in usage] == [1, 2, 3]
    assert usage[0]["cached_tokens"] == 0 and usage[0]["cache_write_tokens"] > 0
    assert all(u["cached_tokens"] > 0 for u in usage[1:])  # the prefix, read back
    assert all(u["cost_usd"] > 0 for u in usage)
    assert usage[1]["cost_usd"] < usage[0]["cost_usd"] / 2  # cache reads billed at a discount
    total = result.meta.extra["usage"]  # the steps and preflight's ping, all billed
    assert total["calls"] == 4 and total["cost_usd"] > sum(u["cost_usd"] for u in usage)
    assert total["cached_tokens"] == sum(u["cached_tokens"] for u in usage)
    assert total["uncached_tokens"] == total["prompt_tokens"] - total["cached_tokens"]
    assert result.meta.cost_usd == pytest.approx(total["cost_usd"])  # what --max-cost counts


def test_max_cost_stops_the_run_on_what_was_billed(task, config, monkeypatch) -> None:
    """The limit reads the provider's billed usage (the preflight's ping included), not an
    estimate: a limit below one call's price stops the run before its second step."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-dummy-for-the-fake-server")
    limit_usd = 1e-6
    with FakeAnthropic(list(STEPS)) as server:
        run = config(server.url, max_steps=3, model="anthropic/claude-sonnet-4-5")
        run.limits = Limits(max_steps=3, max_cost_usd=limit_usd)
        result = start_run(task, run)
    assert not server.errors and result.reason == "max_cost"
    assert result.meta.steps <= 1 and result.meta.cost_usd >= limit_usd
    assert result.meta.cost_usd == pytest.approx(result.meta.extra["usage"]["cost_usd"])


def test_tokens_and_cost_per_step_in_the_live_view_and_show(task, config, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-dummy-for-the-fake-server")
    log = io.StringIO()
    view = LiveView(Console(file=log, width=80), interactive=False)
    with FakeAnthropic(list(STEPS)) as server, view:
        result = start_run(task, config(server.url, max_steps=3,
                                        model="anthropic/claude-sonnet-4-5"), view.on_event)
    lines = log.getvalue().splitlines()
    assert any("context window 200,000 tokens (litellm's model information); prompt caching "
               "on" in line for line in lines), lines[:3]
    billed = [line for line in lines if line.startswith("  tokens ")]
    assert len(billed) == 3 and "cached" in billed[-1] and "$" in billed[-1]
    monkeypatch.setenv("COLUMNS", "80")
    shown = CliRunner().invoke(app, ["show", str(result.run_dir)])
    assert shown.exit_code == 0, shown.output
    assert "tokens and cost per step" in shown.output and "cached" in shown.output
    assert max(len(line) for line in shown.output.splitlines()) <= 80
    data = json.loads(CliRunner().invoke(app, ["show", str(result.run_dir), "--json"]).output)
    assert [s["step"] for s in data["steps"]] == [1, 2, 3]
    assert data["steps"][1]["cached_tokens"] > 0 and data["steps"][1]["cost_usd"] > 0


def test_a_provider_without_marked_caching_gets_no_markers(task, config) -> None:
    events = Events()
    with FakeOpenAI(list(STEPS)) as server:
        result = start_run(task, config(server.url, max_steps=3), events)
    assert result.reason == "max_steps" and len(server.requests) == 4  # ping + 3 steps
    assert all("cache_control" not in json.dumps(body) for body in server.requests)
    assert events.of("context")[0]["caching"] is False
    assert result.meta.extra["usage"]["cached_tokens"] == 0
