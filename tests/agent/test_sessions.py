"""Scripted sessions through litellm against a real local HTTP server, judged for real on
the CPU: the loop's decisions (best kept, nudges, stop rules) on actual verdicts.

Reaching the target needs a speedup: the sessions that must reach it use the prefix-sum task,
whose kernel wins by doing less work (margins measured in tests/agent/conftest.py); the
others are judged without timing (`UNTIMED`), so no measurement decides them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cudaopt.agent.run import start_run
from cudaopt.judge import Status
from tests.agent.conftest import GOOD_FILES, UNTIMED, Events, source
from tests.fakeopenai import FakeOpenAI, Reply, call, say

pytestmark = pytest.mark.slow  # whole agent runs, each judging real builds


def write_good() -> list[Reply]:
    return [call("write", path=name, content=source(name)) for name in GOOD_FILES]


def exclusive_scan() -> str:
    """The kernel with a classic off-by-one: each sum is stored before its own element is
    added (an exclusive scan), so it builds and runs but is wrong almost everywhere."""
    good = source("kernels/prefix_sum.cpp")
    wrong = good.replace("sum += in[j];\n      out[j] = sum;", "out[j] = sum;\n      sum += in[j];")
    assert wrong != good
    return wrong


def last_content(messages: list[dict[str, Any]]) -> str:
    return messages[-1].get("content") or ""


def test_wrong_kernel_is_seen_fixed_and_reaches_target(task, config, events: Events) -> None:
    def saw_failure(messages: list[dict[str, Any]]) -> Reply:
        assert "[exit code 4]" in last_content(messages), last_content(messages)[-2000:]
        return call("write", path="kernels/prefix_sum.cpp",
                    content=source("kernels/prefix_sum.cpp"))

    script = [
        call("read", path="model.py"),
        call("write", path="kernels/prefix_sum.cpp", content=exclusive_scan()),
        *write_good()[1:],
        call("bash", command="cudaopt verify --device cpu --trials 3"),
        saw_failure,
        call("bash", command="cudaopt profile --device cpu --time-budget 2"),
        say("Done: a running sum in one C++ extension."),
        say("No further gain in sight."),
    ]
    with FakeOpenAI(script) as server:
        result = start_run(task, config(server.url), events)
    assert not server.errors
    assert result.reason == "done" and result.accepted, result
    run = result.run_dir
    best = (run / "best" / "kernels" / "prefix_sum.cpp").read_text()
    assert best == source("kernels/prefix_sum.cpp")
    statuses = [d["verdict"].status for d in events.of("candidate")]
    assert Status.WRONG in statuses and statuses[-1] is Status.OK
    assert json.loads((run / "final_verdict.json").read_text())["accepted"] is True
    assert json.loads((run / "meta.json").read_text())["status"] == "accepted"
    lines = [json.loads(line) for line in (run / "trajectory.jsonl").read_text().splitlines()]
    assert any(line.get("message", {}).get("role") == "tool" for line in lines)


def test_the_shells_judgement_with_the_runs_settings_is_not_judged_twice(
        task, config, events: Events) -> None:
    """A `cudaopt profile` asking for exactly the run's judgement (its task, its settings:
    trials 3, a 2 s budget) is served by the loop's tracker from the stage, so its record is
    trusted as it stands and is not judged again; the model reads its workspace's paths,
    not the stage's. A `verify` with other settings (trials 2) is judged in place, and its
    record is not trusted."""
    script = [
        *write_good(),
        call("bash", command="cudaopt verify --device cpu --trials 2"),
        call("bash", command="cudaopt profile --device cpu --trials 3 --time-budget 2"),
        say("Done."),
        say("Nothing more to do."),
    ]
    with FakeOpenAI(script) as server:
        result = start_run(task, config(server.url), events)
    assert not server.errors and result.accepted, (result.reason, result.final)
    shown = events.of("candidate")
    assert [d["trusted"] for d in shown[:2]] == [False, True], shown
    texts = [d.get("text", "") for d in events.of("judge")]
    assert not any("a claimed best" in text for text in texts), texts
    tools = [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"]
    stage = str(config(server.url).stage_dir)
    assert "reward" in tools[-1] and stage not in "".join(tools)


def test_early_stop_is_pushed_on(task, config, events: Events) -> None:
    def pushed(messages: list[dict[str, Any]]) -> Reply:
        assert "target is not reached" in last_content(messages)
        return write_good()[0]

    script = [
        say("The reference already looks fast; I am done."),
        pushed,
        *write_good()[1:],
        say("Done."),
        say("Nothing more to do."),
    ]
    with FakeOpenAI(script) as server:
        result = start_run(task, config(server.url), events)
    assert not server.errors
    assert result.accepted and result.reason == "done"
    nudges = [d["text"] for d in events.of("message") if d["role"] == "cudaopt"]
    assert "not reached" in nudges[0] and "target is reached" in nudges[-1]
    first = events.of("candidate")[0]["verdict"]
    assert not first.clean  # the untouched starter copy runs torch ops: a violation


def test_broken_late_kernel_keeps_the_best(task, config, events: Events) -> None:
    broken = source("kernels/prefix_sum.cpp").replace("sum += in[j];", "sum += in[j]")
    script = [
        *write_good(),
        say("Done."),
        call("write", path="kernels/prefix_sum.cpp", content=broken),
        say("Done again."),
    ]
    with FakeOpenAI(script) as server:
        result = start_run(task, config(server.url, len(script), judge=UNTIMED), events)
    assert not server.errors
    judged = [d["verdict"].status for d in events.of("candidate")]
    assert judged == [Status.OK, Status.BUILD_FAILED]
    assert result.reason == "max_steps" and result.final is not None and result.final.clean
    best = result.run_dir / "best" / "kernels" / "prefix_sum.cpp"
    assert best.read_text() == source("kernels/prefix_sum.cpp")
    assert (result.run_dir / "workspace" / "kernels" / "prefix_sum.cpp").read_text() == broken
    assert len(events.of("best")) == 1


def test_model_without_tool_calling_uses_fenced_blocks(task, config, events: Events) -> None:
    blocks = "\n".join(f"```write {name}\n{source(name)}```" for name in GOOD_FILES)

    def ran(messages: list[dict[str, Any]]) -> Reply:
        listing = last_content(messages)
        assert "[exit code 0]" in listing and "prefix_sum_binding.cpp" in listing, listing
        return say("All done.")

    script = [say(f"Writing the kernel.\n{blocks}\n```bash\nls kernels\n```"), ran]
    with FakeOpenAI(script, tools_supported=False) as server:
        result = start_run(task, config(server.url, len(script), judge=UNTIMED), events)
        assert all("tools" not in body for body in server.requests[1:])
    assert not server.errors
    assert [d["verdict"].status for d in events.of("candidate")] == [Status.OK]
    assert result.final is not None and result.final.clean
    for name in GOOD_FILES:  # the blocks were written where they said
        assert (result.run_dir / "best" / name).read_text() == source(name)
    assert json.loads((result.run_dir / "meta.json").read_text())["extra"]["tools"] is False


def test_writes_outside_the_workspace_are_refused(task, config, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    script = [
        call("write", path="../../outside/a.txt", content="x"),
        call("write", path=str(outside / "b.txt"), content="x"),
        call("bash", command=f"ln -s {outside} escape"),
        call("write", path="escape/c.txt", content="x"),
        call("edit", path="model.py", old="x @ torch.triu", new="torch.triu"),
        call("write", path="model.py", content="# mine now"),
        call("read", path="/etc/passwd"),
        call("glob", pattern="../*"),
        call("grep", pattern="root", path="/etc"),
    ]
    with FakeOpenAI(script) as server:
        result = start_run(task, config(server.url, max_steps=len(script)), Events())
        tool_results = [
            m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"
        ]
    assert list(outside.iterdir()) == [] or [p.name for p in outside.iterdir()] == []
    assert (result.run_dir / "workspace" / "model.py").read_text() == task.read_text()
    refused = [r for r in tool_results if r.startswith("error:")]
    assert len(refused) == len(script) - 2  # all but the ln -s and the last (unanswered) one
    assert all(
        "outside the workspace" in r or "read-only" in r or "stay inside" in r for r in refused
    )
    assert result.reason == "max_steps" and result.final is None
    assert result.meta.status == "not_accepted"
