"""Sessions longer than the model's context window, against a local server that has one
(it refuses an over-long request with HTTP 400 `context_length_exceeded`, as vLLM and
OpenAI do): the run compacts what it sends, keeps what the model needs whole, recovers from
a refusal, and compacts a resumed run before its first request."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from cudaopt.agent.run import resume_run, start_run
from cudaopt.cli.live import LiveView
from tests.agent.conftest import GOOD_FILES, Events, source
from tests.fakeopenai import FakeOpenAI, call, say

pytestmark = pytest.mark.slow  # whole agent runs

WINDOW = 16000  # the server's window, in its tokens (4 characters each)
KERNEL = "kernels/notes.cpp"  # any file under kernels/ is part of the candidate
KERNEL_TEXT = "// the kernel's design notes, kept whole in every request\n" + "".join(
    f"// {n:03d}: accumulate row {n} in registers, one store per output\n" for n in range(40))


def noisy(n: int) -> Any:
    """A shell command printing ~6,000 characters that name step `n`."""
    return call("bash", command=f"python3 -c \"[print('output {n} row', i, 'x' * 60) "
                f"for i in range(80)]\"")


def script(steps: int) -> list[Any]:
    return [call("write", path=KERNEL, content=KERNEL_TEXT),
            *[noisy(n) for n in range(1, steps)]]


def session_requests(server: FakeOpenAI) -> list[tuple[dict[str, Any], int]]:
    """The loop's requests (preflight's ping left out) with the server's token count."""
    return [(body, tokens) for body, tokens in zip(server.requests, server.tokens, strict=True)
            if any(m.get("role") == "system" for m in body.get("messages", []))]


def answered_in_order(body: dict[str, Any]) -> bool:
    """Every tool result follows the call it answers: providers refuse anything else."""
    called: set[str] = set()
    for message in body["messages"]:
        called |= {c["id"] for c in message.get("tool_calls") or []}
        if message["role"] == "tool" and message["tool_call_id"] not in called:
            return False
    return True


def text_of(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"])


def notes(run_dir: Path, kind: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in (run_dir / "trajectory.jsonl").read_text().splitlines()]
    return [line for line in lines if line.get("note") == kind]


def test_known_window_is_never_passed_and_keeps_what_the_model_needs(task, config) -> None:
    events = Events()
    with FakeOpenAI(script(24), context_tokens=WINDOW, model_card=True) as server:
        result = start_run(task, config(server.url, max_steps=24), events)
    assert not server.errors and server.refused == 0
    assert result.reason == "max_steps" and result.meta.steps == 24
    sent = session_requests(server)
    assert len(sent) == 24 and max(tokens for _, tokens in sent) <= WINDOW
    assert all(answered_in_order(body) for body, _ in sent)
    budget = events.of("context")[0]["budget"]
    assert budget.window_tokens == WINDOW and budget.source == "the endpoint's model card"
    compactions = notes(result.run_dir, "compacted")
    assert compactions and compactions[0]["reason"] == "budget"
    # uncompacted, the conversation is far beyond the window
    whole = FakeOpenAI.count({"messages": [n["message"] for n in _lines(result.run_dir)
                                           if "message" in n], "tools": sent[-1][0]["tools"]})
    assert whole > 2 * WINDOW
    last, _ = sent[-1]
    messages = last["messages"]
    first_user = next(n["message"] for n in _lines(result.run_dir)
                      if n.get("message", {}).get("role") == "user")
    assert messages[1]["content"].startswith(first_user["content"])  # the task, whole
    assert KERNEL_TEXT in messages[1]["content"]  # the current kernel, whole
    assert "compacted" in messages[1]["content"] and "output 1 row 40 " not in text_of(last)
    latest = [m for m in result.run_dir.joinpath("trajectory.jsonl").read_text().splitlines()
              if '"role": "tool"' in m]
    before_last = json.loads(latest[-2])["message"]["content"]  # step 23's output
    assert "output 22 row 79" in before_last and messages[-1]["content"] == before_last


def _lines(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "trajectory.jsonl").read_text().splitlines()]


def test_unknown_window_is_learned_from_one_refusal(task, config, stage_dir) -> None:
    with FakeOpenAI(script(14), context_tokens=WINDOW) as server:  # no model card
        result = start_run(task, config(server.url, max_steps=14))
    assert not server.errors
    assert result.reason == "max_steps" and result.meta.steps == 14
    sent = session_requests(server)
    assert server.refused == 1 and sum(tokens > WINDOW for _, tokens in sent) == 1
    assert [c["reason"] for c in notes(result.run_dir, "compacted")][0] == "refused"
    last = sent[-1][0]["messages"][-1]["content"]  # after the retry, nothing is clipped again
    assert "output 12 row 40" in last and "characters cut by cudaopt" not in last
    meta = json.loads((result.run_dir / "meta.json").read_text())
    assert meta["extra"]["context"]["window_tokens"] == WINDOW
    with FakeOpenAI([noisy(99)], context_tokens=WINDOW) as server:  # resumed: remembered
        resume_run(result.run_dir, api_base=server.url, stage_dir=stage_dir,
                   limits=config(server.url, max_steps=15).limits,
                   judge=config(server.url).judge)
    assert server.refused == 0 and len(session_requests(server)) == 1


def test_a_window_too_small_for_the_task_stops_with_the_setting_to_change(task, config) -> None:
    with FakeOpenAI(script(3), context_tokens=2000, state_window=False) as server:
        result = start_run(task, config(server.url, max_steps=3))
    assert result.reason == "model_error" and server.refused == 2  # one retry, no more
    error = result.meta.extra["error"]
    assert "context window" in error and "context_tokens" in error
    assert "--max-model-len" in error and "--resume" in error
    log = io.StringIO()
    LiveView(Console(file=log, width=80), interactive=False).on_event(
        "done", {"reason": result.reason, "verdict": None, "meta": result.meta})
    assert "context_tokens" in log.getvalue()  # the user reads it at the end of the run


def test_resumed_long_run_compacts_before_its_first_request(task, config, stage_dir) -> None:
    with FakeOpenAI(script(12)) as server:  # no window: the whole history is sent
        first = start_run(task, config(server.url, max_steps=12))
    assert first.reason == "max_steps" and not notes(first.run_dir, "compacted")
    with FakeOpenAI([noisy(99)], context_tokens=WINDOW, model_card=True) as server:
        resume_run(first.run_dir, api_base=server.url, stage_dir=stage_dir,
                   limits=config(server.url, max_steps=13).limits,
                   judge=config(server.url).judge)
    sent = session_requests(server)
    assert server.refused == 0 and sent and sent[0][1] <= WINDOW
    compacted = notes(first.run_dir, "compacted")
    assert compacted and compacted[0]["before_step"] == 13
    assert KERNEL_TEXT in sent[0][0]["messages"][1]["content"]
    assert "interrupted and has been resumed" in text_of(sent[0][0])


@pytest.mark.parametrize("card", [True, False], ids=["known window", "unknown window"])
def test_a_session_far_over_the_window_judges_its_kernel_written_before_compaction(
        task, config, card: bool) -> None:
    """Known from the endpoint's model card: no request over the window; unknown: at most
    one, refused and learned from. Either way the run ends accepted."""
    writes = [call("write", path=name, content=source(name)) for name in GOOD_FILES]
    steps = [*writes, *[noisy(n) for n in range(1, 10)], say("Done."), say("Done.")]
    with FakeOpenAI(steps, context_tokens=WINDOW, model_card=card) as server:
        result = start_run(task, config(server.url, max_steps=16))
    assert not server.errors and server.refused == (0 if card else 1)
    over = [tokens for _, tokens in session_requests(server) if tokens > WINDOW]
    assert len(over) == (0 if card else 1)
    assert notes(result.run_dir, "compacted")[0]["before_step"] < len(steps) - 1
    assert result.final is not None and result.final.correct  # the kernel, judged and kept
    assert (result.run_dir / "best" / GOOD_FILES[0]).read_text() == source(GOOD_FILES[0])
    assert result.accepted and result.reason == "done"  # an O(n) kernel for an O(n^2) task
