"""The compactor on its own: what a compacted request keeps whole, what it summarizes, and
that it never breaks a tool call from its result, for tool-calling and fenced-block
conversations alike."""

from __future__ import annotations

import json
from typing import Any

from cudaopt.agent.policy.compaction import CLIP_CHARS, Compactor
from cudaopt.agent.policy.context import Budget, estimate_tokens

SYSTEM = {"role": "system", "content": "rules " * 500}
TASK = {"role": "user", "content": "Task: make model.py faster."}
FILES = "kernels/k.cpp:\n```\n// the current kernel\n```"


def standing() -> tuple[str, str]:
    return "best so far is candidate 2: correct, 1.40x vs torch.compile (reward 3).", FILES


def tool_session(steps: int, output_chars: int = 6000) -> list[dict[str, Any]]:
    messages = [SYSTEM, TASK]
    for n in range(1, steps + 1):
        messages.append({"role": "assistant", "content": "", "tool_calls": [
            {"id": f"c{n}", "type": "function",
             "function": {"name": "bash", "arguments": json.dumps({"command": f"run {n}"})}}]})
        messages.append({"role": "tool", "tool_call_id": f"c{n}",
                         "content": f"[exit code 0]\n{n}:" + "y" * output_chars + f"\nend {n}"})
    return messages


def test_compacted_request_keeps_the_system_task_files_and_latest_turns() -> None:
    messages = tool_session(20)
    compactor = Compactor(Budget(16_000, "test"), estimate_tokens, standing)
    sent, done = compactor.view(messages, None, step=21)
    assert done is not None and done.reason == "budget" and done.steps[0] == 1
    assert estimate_tokens(sent, None) <= 0.85 * 12_000 < estimate_tokens(messages, None)
    assert sent[0] == SYSTEM and sent[1]["content"].startswith(TASK["content"])
    assert FILES in sent[1]["content"] and "reward 3" in sent[1]["content"]
    assert sent[-2:] == messages[-2:] and sent[-4:-2] == messages[-4:-2]  # two turns whole
    assert "- step 1: bash run 1 -> " in sent[1]["content"] and "end 1" in sent[1]["content"]
    assert sent[2]["role"] == "assistant"  # a turn starts the kept tail: calls answered
    again, none = compactor.view([*messages, *tool_session(1)[2:]], None, step=22)
    assert none is None and again[1] == sent[1]  # the prefix stays put: cached next time


def test_nothing_to_compact_is_no_compaction() -> None:
    messages = tool_session(2, output_chars=30_000)  # two huge turns, both protected
    sent, done = Compactor(Budget(16_000, "test"), estimate_tokens, standing).view(
        messages, None, step=3)
    assert done is None and sent == messages


def test_a_refusal_compacts_harder_and_clips_long_results() -> None:
    messages = tool_session(6, output_chars=20_000)
    compactor = Compactor(Budget(None, "unknown"), estimate_tokens, standing)
    assert compactor.view(messages, None, step=7) == (messages, None)  # unknown: as it is
    sent, done = compactor.harder(messages, None, step=7, stated=9000)
    assert done.reason == "refused" and done.clipped and compactor.budget.window_tokens == 9000
    assert len(sent) == 4 and len(sent[-1]["content"]) < CLIP_CHARS + 200
    assert sent[-1]["content"].startswith("[exit code 0]") and "end 6" in sent[-1]["content"]


def test_fenced_block_sessions_are_summarized_per_action() -> None:
    messages = [SYSTEM, TASK]
    for n in range(1, 12):
        messages.append({"role": "assistant",
                         "content": f"Step {n}.\n```bash\nmake k{n}\n```"})
        messages.append({"role": "user", "content": f"[1] bash make k{n}\n" + "z" * 6000})
    sent, done = Compactor(Budget(16_000, "test"), estimate_tokens, standing).view(
        messages, None, step=12)
    assert done is not None
    assert "- step 1, the model said: Step 1." in sent[1]["content"]
    assert "- step 1: bash make k1" in sent[1]["content"]
    assert sent[-1] == messages[-1]


def test_a_thousand_step_session_stays_within_the_budget() -> None:
    messages = tool_session(1000, output_chars=3000)
    compactor = Compactor(Budget(32_768, "test"), estimate_tokens, standing)
    sent, done = compactor.view(messages, None, step=1001)
    assert done is not None and estimate_tokens(sent, None) <= 0.85 * (32_768 - 8192)
    last = done.steps[1]
    assert "older lines folded" in sent[1]["content"] and f"- step {last}: bash run {last}" in \
        sent[1]["content"]
    assert len(sent[1]["content"]) < 0.2 * 24_576 * 3  # the summary stays bounded
