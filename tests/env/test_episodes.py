"""Episodes over real HTTP: reset lays out optimize's workspace, steps run optimize's tools,
the loop's stopping rules end the episode, and the run directory is an optimize run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from cudaopt.agent.policy.replay import load_turns
from cudaopt.env import AsyncEnvClient, EnvClient, EnvError
from cudaopt.runs.folder import read_meta
from tests.env.conftest import ADVERSARIAL, PREFIX, SWISH, Service, swish_files

TOOLS = ["bash", "read", "write", "edit", "glob", "grep"]


def _finish(client: EnvClient, episode_id: str, reply: dict) -> dict:
    """End turns until the episode is over (the loop nudges a policy that stops short)."""
    for _ in range(10):
        if reply["done"]:
            return reply
        reply = client.step(episode_id, message="Done.")
    raise AssertionError(f"episode {episode_id} did not end: {reply}")


def test_a_scripted_episode_reaches_an_accepted_candidate(client: EnvClient) -> None:
    task = (PREFIX / "model.py").read_text()
    reply = client.reset(task, task_name="prefix_sum.py")
    first = reply["observation"]
    episode_id = first["episode_id"]
    assert reply["done"] is False and first["task"] == task
    assert "ModelNew" in first["skill"] and [t["function"]["name"] for t in first["tools"]] == TOOLS
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    for path, text in swish_files(PREFIX).items():
        step = client.step(episode_id, "write", {"path": path, "content": text})
        assert f"to {path}" in step["observation"]["text"] and step["done"] is False
    listing = client.step(episode_id, "glob", {"pattern": "kernels/*"})
    assert "kernels/prefix_sum.cpp" in listing["observation"]["text"]
    refused = client.step(episode_id, "write", {"path": "model.py", "content": "x"})
    assert "read-only" in refused["observation"]["text"]
    judged = client.step(episode_id, message="Done: fused kernel written.")
    assert judged["reward"] == 3.0, judged  # the loop judged the workspace: accepted
    final = _finish(client, episode_id, judged)
    verdict = final["observation"]["final_verdict"]
    assert final["metadata"]["reason"] == "done" and final["metadata"]["infra_error"] is None
    assert verdict["correct"] and final["reward"] == verdict["reward"] == 3.0
    run = Path(final["metadata"]["run_dir"])
    assert read_meta(run).status == "accepted"
    assert (run / "best" / "kernels" / "prefix_sum.cpp").is_file()
    assert json.loads((run / "final_verdict.json").read_text())["reward"] == 3.0
    calls = [c["function"]["name"] for t in load_turns(run) for c in t.get("tool_calls") or []]
    assert calls == ["write"] * 3 + ["glob", "write"]  # replay: plays the episode again
    state = client.state(episode_id)
    assert state["done"] and state["reward"] == 3.0 and state["step_count"] == final[
        "metadata"]["steps"]
    assert client.step(episode_id, "read", {"path": "model.py"})["done"]  # over: stays over


def test_an_episode_that_cheats_gets_minus_one(client: EnvClient) -> None:
    reply = client.reset((ADVERSARIAL / "task.py").read_text(), task_name="swish_task.py")
    episode_id = reply["observation"]["episode_id"]
    hack = (ADVERSARIAL / "patch_judge.py").read_text()  # blinds in-process checks
    client.step(episode_id, "write", {"path": "model_new.py", "content": hack})
    judged = client.step(episode_id, message="Done.")
    assert judged["reward"] == -1.0 and "tampering" in judged["observation"]["text"]
    final = _finish(client, episode_id, judged)
    assert final["reward"] == -1.0 and final["metadata"]["infra_error"] is None
    assert final["observation"]["final_verdict"] is None  # never a best to re-check
    record = Path(final["metadata"]["run_dir"]) / "candidates" / "001" / "verdict.json"
    assert any("tampering" in v for v in json.loads(record.read_text())["violations"])


def test_concurrent_episodes_beyond_capacity_wait_their_turn(service: Service) -> None:
    """Three tasks, room for two episodes: the third is told to retry, and gets in once
    one ends (here at the step limit); each episode sees only its own task."""
    tasks = {f"task_{n}.py": (SWISH / "model.py").read_text().replace(
        "features = 256", f"features = {256 + n}") for n in range(3)}
    impatient = service.client(busy_wait_s=0)
    async_client = AsyncEnvClient(service.url, token_file=service.token_file)

    async def start_two() -> list[dict]:
        names = list(tasks)[:2]
        return await asyncio.gather(*(async_client.reset(tasks[n], n) for n in names))

    first, second = asyncio.run(start_two())
    with pytest.raises(EnvError) as busy:
        impatient.reset(tasks["task_2.py"], "task_2.py")
    assert busy.value.status == 503 and busy.value.retry_after_s >= 1
    assert "retry after" in str(busy.value)
    ids = [r["observation"]["episode_id"] for r in (first, second)]

    async def read_until_done(episode_id: str) -> dict:
        while not (reply := await async_client.step(episode_id, "read",
                                                    {"path": "model.py"}))["done"]:
            last = reply
        assert "features = 25" in last["observation"]["text"]
        return reply

    ended = asyncio.run(read_until_done(ids[0]))
    assert ended["metadata"]["reason"] == "max_steps" and ended["reward"] == -1.0
    third = impatient.reset(tasks["task_2.py"], "task_2.py")["observation"]["episode_id"]
    seen = impatient.step(third, "grep", {"pattern": "features = ", "path": "model.py"})
    assert "features = 258" in seen["observation"]["text"]
    still = impatient.step(ids[1], "read", {"path": "model.py"})
    assert "features = 257" in still["observation"]["text"]
    for episode_id in (ids[1], third):  # leave room for other tests
        while not impatient.step(episode_id, "read", {"path": "model.py"})["done"]:
            pass
