"""An episode longer than the policy's context window (`env serve --context-tokens`): the
trainer is handed the compacted conversation once, marked as replacing its history, the
episode's record says what was compacted, and the run's trajectory keeps everything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cudaopt.agent.policy.context import estimate_tokens
from tests.env.conftest import SERVE_ARGS, SWISH, Service, swish_files

WINDOW = 12000


def noisy(n: int) -> str:
    return f"python3 -c \"[print('output {n} row', i, 'x' * 60) for i in range(80)]\""


@pytest.fixture(params=["flag", "setting"])
def short_service(tmp_path: Path, request: pytest.FixtureRequest):
    """The window from `--context-tokens`, or from the `context_tokens` setting's layers (here
    its environment variable) as `optimize` reads it."""
    if request.param == "flag":
        running = Service(tmp_path, *SERVE_ARGS, "--max-steps", "12", "--context-tokens",
                          str(WINDOW))
    else:
        running = Service(tmp_path, *SERVE_ARGS, "--max-steps", "12",
                          env={"CUDAOPT_CONTEXT_TOKENS": str(WINDOW)})
    yield running
    running.stop()


def test_a_long_episode_is_compacted_and_says_so(short_service: Service) -> None:
    client = short_service.client()
    reply = client.reset((SWISH / "model.py").read_text(), task_name="fused_swish.py")
    episode_id = reply["observation"]["episode_id"]
    history = list(reply["observation"]["messages"])  # the trainer's own copy
    kernel = swish_files()["kernels/fused_swish.cpp"]
    steps = [("write", {"path": "kernels/fused_swish.cpp", "content": kernel})]
    steps += [("bash", {"command": noisy(n)}) for n in range(1, 11)]
    replaced = []
    for number, (tool, args) in enumerate(steps, 1):
        reply = client.step(episode_id, tool, args)
        observation = reply["observation"]
        assert not reply["done"], reply
        if observation.get("replaces_history"):
            replaced.append((number, observation))
            history = list(observation["messages"])
        else:
            history += [{"role": "assistant"}, *observation["messages"]]
        assert estimate_tokens(history, None) < WINDOW  # what the trainer holds fits
    assert replaced, "no compaction in a session far over the window"
    number, observation = replaced[0]
    messages = observation["messages"]
    assert messages[0]["role"] == "system" and kernel in messages[1]["content"]
    assert observation["compaction"]["reason"] == "budget"
    assert observation["compaction"]["budget"]["source"] == "setting context_tokens"
    assert f"output {number - 1} row 79" in messages[-1]["content"]  # the latest, whole
    final = client.step(episode_id, "read", {"path": "model.py"})  # the 12th step: the last
    assert final["done"] and final["metadata"]["compactions"]
    run = Path(final["metadata"]["run_dir"])
    record = json.loads((run.parent / "episode.json").read_text())
    assert record["compactions"] == final["metadata"]["compactions"]
    trajectory = (run / "trajectory.jsonl").read_text()
    assert all(f"output {n} row 40 " in trajectory for n in range(1, 11))  # nothing lost
    assert "class Model" in final["observation"]["text"]  # the last result, after the loop
