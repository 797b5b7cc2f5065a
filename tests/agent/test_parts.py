"""The loop's parts on their own: tools and their confinement, fenced actions, records,
the judging stage, the trajectory and the templates. No model and no judge, except one
check that the skill file's worked example really builds and verifies."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cudaopt.agent import prompts, records, stage
from cudaopt.agent.environment import actions
from cudaopt.agent.environment.layout import (
    READ_ONLY,
    BackendError,
    create_workspace,
    skill_values,
)
from cudaopt.agent.environment.shell import LocalShell, truncate
from cudaopt.agent.environment.workspace import Workspace
from cudaopt.agent.trajectory import Trajectory, answer_open_calls
from cudaopt.judge import JudgeOptions, Verdict, check


@pytest.fixture
def workspace(tmp_path: Path, task: Path) -> Workspace:
    root = tmp_path / "ws"
    create_workspace(root, task, skill_values("cpu", 5, 0.01))
    return Workspace(
        root, LocalShell(dict(os.environ), timeout_s=2, output_limit_chars=400), READ_ONLY
    )


def test_workspace_layout(workspace: Workspace, task: Path) -> None:
    root = workspace.root
    assert (root / "model.py").read_text() == task.read_text()
    starter = (root / "model_new.py").read_text()
    assert "class ModelNew(nn.Module)" in starter and "class Model(" not in starter
    skill = (root / "skills" / "SKILL.md").read_text()
    assert "{{" not in skill and "cudaopt verify --device cpu" in skill
    assert "CUDAOPT_BIND" in skill and "load_inline" in skill
    assert not (root / "kernels").exists()  # an empty kernels/ would be a failed build


def test_a_triton_workspace_teaches_triton(tmp_path: Path, task: Path) -> None:
    """`--backend triton`: the Triton skill with its worked example, a starter that points
    at Triton, the Triton examples beside it, and the prompts naming the language."""
    values = skill_values("cuda", 5, 0.01, backend="triton")
    create_workspace(tmp_path / "ws", task, values)
    skill = (tmp_path / "ws" / "skills" / "SKILL.md").read_text()
    assert "{{" not in skill and "@triton.jit" in skill and "load_inline" not in skill
    assert "cudaopt verify --device cuda" in skill
    assert "@triton.jit" in (tmp_path / "ws" / "model_new.py").read_text()
    examples = sorted(p.name for p in (tmp_path / "ws" / "skills" / "examples").iterdir())
    assert examples == ["triton"]
    system = prompts.prompt("system", workspace="w", action_format="A", skill="S", **values)
    assert "custom Triton kernels for the cuda\ndevice" in system


def test_triton_on_the_cpu_is_refused_by_name() -> None:
    with pytest.raises(BackendError, match="Triton kernels need a CUDA device .* on cpu"):
        skill_values("cpu", 5, 0.01, backend="triton")
    with pytest.raises(BackendError, match="unknown backend 'rust'"):
        skill_values("cuda", 5, 0.01, backend="rust")


def test_file_tools_round_trip(workspace: Workspace) -> None:
    assert workspace.call("write", {"path": "kernels/a.cpp", "content": "int x = 1;\n"}).ok
    assert workspace.call("edit", {"path": "kernels/a.cpp", "old": "1", "new": "2"}).ok
    assert workspace.call("read", {"path": "kernels/a.cpp"}).output == "int x = 2;\n"
    assert workspace.call("glob", {"pattern": "kernels/*.cpp"}).output == "kernels/a.cpp"
    assert workspace.call("grep", {"pattern": "x = 2"}).output == "kernels/a.cpp:1: int x = 2;"
    twice = workspace.call("edit", {"path": "model_new.py", "old": "", "new": "y"})
    assert not twice.ok and "exactly once" in twice.output


def test_tools_refuse_bad_calls(workspace: Workspace) -> None:
    assert "unknown tool" in workspace.call("rm", {"path": "x"}).output
    assert "bad arguments" in workspace.call("read", {"file": "x"}).output
    assert "read-only" in workspace.call("write", {"path": "skills/SKILL.md", "content": ""}).output


def test_bash_times_out_and_truncates(workspace: Workspace) -> None:
    slow = workspace.call("bash", {"command": "sleep 10"}).output
    assert slow.startswith("[timed out after")
    long = workspace.call("bash", {"command": "seq 1 5000; exit 3"}).output
    assert long.startswith("[exit code 3]") and "characters cut" in long and long.endswith("5000\n")
    assert truncate("abc", 10) == "abc"


def test_fenced_actions_parse() -> None:
    text = (
        "Plan.\n```python\nprint('not run')\n```\n```write kernels/a.cpp\nint a;\n```\n"
        "```bash\ncudaopt verify --device cpu\n```\n"
    )
    parsed = actions.from_text(text)
    assert [(a.name, a.args) for a in parsed] == [
        ("write", {"path": "kernels/a.cpp", "content": "int a;\n"}),
        ("bash", {"command": "cudaopt verify --device cpu"}),
    ]
    assert actions.from_text("```write\nx\n```")[0].error


def test_tool_calls_with_bad_json_become_errors() -> None:
    [bad] = actions.from_tool_calls(
        [{"id": "1", "function": {"name": "bash", "arguments": "{nope"}}]
    )
    assert bad.error and bad.call_id == "1"


def test_records_number_and_snapshot(tmp_path: Path) -> None:
    cand = tmp_path / "c"
    (cand / "kernels" / "build").mkdir(parents=True)
    (cand / "model_new.py").write_text("m")
    (cand / "kernels" / "k.cpp").write_text("k")
    (cand / "kernels" / "build" / "k.o").write_text("obj")
    first = records.record(tmp_path / "rec", cand / "model_new.py", Verdict())
    second = records.record(tmp_path / "rec", cand / "model_new.py", Verdict())
    assert (first.name, second.name) == ("001", "002")
    assert records.list_records(tmp_path / "rec") == [1, 2]
    assert not (first / "kernels" / "build").exists()
    assert records.content_hash(first) == records.content_hash(cand)
    assert records.read_verdict(first).status == Verdict().status


def test_stage_rewrites_only_what_changed(tmp_path: Path) -> None:
    src, dst = tmp_path / "src", tmp_path / "stage"
    (src / "kernels").mkdir(parents=True)
    (src / "model_new.py").write_text("m")
    (src / "kernels" / "a.cpp").write_text("a")
    (src / "kernels" / "b.cpp").write_text("b")
    stage.sync(src, dst)
    (dst / ".cudaopt").mkdir()
    kept = (dst / "kernels" / "a.cpp").stat().st_mtime_ns
    (src / "kernels" / "b.cpp").unlink()
    (src / "model_new.py").write_text("m2")
    stage.sync(src, dst)
    assert (dst / "kernels" / "a.cpp").stat().st_mtime_ns == kept
    assert not (dst / "kernels" / "b.cpp").exists() and (dst / ".cudaopt").is_dir()
    (src / "kernels" / "a.cpp").unlink()
    stage.sync(src, dst)
    assert not (dst / "kernels").exists()  # no empty kernels/ left for the judge


def test_trajectory_answers_calls_cut_by_an_interrupt(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    traj = Trajectory(path)
    calls = [{"id": "a", "function": {"name": "bash"}}, {"id": "b", "function": {"name": "read"}}]
    traj.append({"role": "assistant", "content": "", "tool_calls": calls}, 1)
    traj.append({"role": "tool", "tool_call_id": "a", "content": "ok"}, 1)
    traj.note("stop", 1, reason="interrupted")
    with path.open("a") as f:
        f.write('{"step": 1, "mess')  # a line cut short by a hard kill
    messages = traj.messages()
    assert [m.get("tool_call_id") for m in messages[1:]] == ["b", "a"]
    assert answer_open_calls(messages) == messages


def test_prompts_render_fully() -> None:
    values = {
        **skill_values("cuda", 5, 0.01),
        "bash_timeout_s": "600",
        "status": "s",
        "task_path": "t",
        "workspace": "w",
        "skill": "S",
        "action_format": "A",
        "number": "1",
        "summary": "bash ls",
        "output": "o",
        # compacted.md and too_long.md
        **dict.fromkeys(("budget", "first_step", "last_step", "now_step", "lines", "files",
                         "model", "request", "fixed", "detail"), "x"),
        # synth_system.md and synth_user.md (`cudaopt synth --model`)
        **dict.fromkeys(("device", "high_ms", "kept", "low_ms", "max_ops", "ops"), "x"),
    }
    for template in prompts.PROMPTS_DIR.glob("*.md"):
        assert "{{" not in prompts.prompt(template.stem, **values), template
    assert [t["function"]["name"] for t in prompts.tool_schemas()] == list(prompts.TOOL_NAMES)
    assert "{{" not in prompts.skill(**skill_values("cuda", 5, 0.01))
    with pytest.raises(prompts.TemplateError):
        prompts.prompt("first_user")


@pytest.mark.slow
def test_skill_worked_example_builds_and_verifies(tmp_path: Path) -> None:
    example = prompts.SKILLS_DIR / "examples" / "cpu_split"
    verdict = check(
        example / "model.py",
        example / "model_new.py",
        JudgeOptions(device="cpu", profile=False, trials=2, build_dir=tmp_path / "build"),
    )
    assert verdict.clean, json.dumps(verdict.to_json(), indent=1)[:3000]
