"""Each filter rejects what it exists for, reached the way real candidates reach it: tasks a
scripted model writes (through litellm, to a real server on 127.0.0.1), and suites given
with --against."""

from __future__ import annotations

import re
import shutil

import pytest

from tests.fakeopenai import FakeOpenAI, say
from tests.synth.conftest import manifest, synth

pytestmark = pytest.mark.slow
KEY = {"OPENAI_API_KEY": "sk-test"}  # the fake server ignores it; litellm wants one
HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
TAIL = """

def get_inputs():
    return [torch.rand(64, 256)]


def get_init_inputs():
    return []
"""


def task(forward: str, init: str = "") -> str:
    body = f"class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n{init}"
    return f"```python\n{HEAD}{body}\n    def forward(self, x):\n{forward}{TAIL}```"


CONSTANT = task("        return torch.sigmoid(x) * 0.0 + 1.0\n")
RANDOM = task("        return torch.relu(x) + torch.rand_like(x)\n")
SLOW = task("        for _ in range(30):\n            x = x + 0.01 * torch.tanh(x @ self.w)\n"
            "        return x\n",
            "        self.w = nn.Parameter(torch.rand(256, 256) / 256)\n"
            ).replace("torch.rand(64, 256)", "torch.rand(4096, 256)")
GOOD = task("        return F.gelu(self.fc(x)).sum(dim=1)\n",
            "        self.fc = nn.Linear(256, 128)\n")
HANG = task("        import time\n        time.sleep(3600)\n        return x\n")
CRASH = task("        import os\n        os.abort()\n")


def test_constant_random_and_slow_tasks_are_each_rejected_by_their_filter(tmp_path) -> None:
    shown: list[str] = []

    def good(messages: list[dict]) -> object:
        shown.append(messages[-1]["content"])
        return say(GOOD)

    script = [say(CONSTANT), say(RANDOM), say(SLOW), good]
    with FakeOpenAI(script) as server:
        done = synth("--n", "1", "--out", tmp_path, "--model", "openai/scripted",
                     "--api-base", server.url, "--eager-ms", "0.01,50", env=KEY)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = manifest(tmp_path)
    assert [line["status"] for line in lines] == [
        "input_dependent", "deterministic", "eager_window", "kept"]
    assert lines[2]["eager_ms"] > 50  # 16 GFLOP: 50 ms is 320 GFLOP/s on one thread
    assert lines[3]["ops"] == ["nn.Linear", "F.gelu"] and lines[3]["origin"] == "openai/scripted"
    assert "torch." in shown[0] or "nn." in shown[0] or "F." in shown[0]
    assert "input_dependent" in done.stdout and "eager_window" in done.stdout


def test_a_hanging_or_crashing_task_is_rejected_where_it_stopped(tmp_path) -> None:
    with FakeOpenAI([say(HANG), say(CRASH)]) as server:  # then replies without a task
        done = synth("--n", "1", "--out", tmp_path, "--model", "openai/scripted",
                     "--api-base", server.url, "--eager-ms", "0.01,200", "--timeout", "10",
                     env=KEY)
    lines = manifest(tmp_path)
    assert done.returncode == 1 and "stopped after 100 tries" in done.stderr, done.stderr
    assert [line["status"] for line in lines[:2]] == ["runs_eager", "runs_eager"]
    assert "no result within" in lines[0]["error"] and "died" in lines[1]["error"]
    assert {line["status"] for line in lines[2:]} == {"typechecks"}


def test_against_drops_an_identical_task_and_a_renamed_copy(first_run, tmp_path) -> None:
    out, _ = first_run
    files = sorted(out.glob("0*.py"))
    suite = tmp_path / "suite" / "level1"
    suite.mkdir(parents=True)
    shutil.copy(files[0], suite / "1_copy.py")
    shutil.copy(files[1], suite / "2_original.py")
    renamed = re.sub(r"\bx\b", "inp", files[1].read_text())
    renamed = re.sub(r"self\.(\w+)", r"self.layer_\1", renamed)
    renamed = re.sub(r"(?<=[(, ])\d+(?=[,)])", "17", renamed)
    script = [say(f"```python\n{files[0].read_text()}```"), say(f"```python\n{renamed}```"),
              say(GOOD)]
    with FakeOpenAI(script) as server:
        done = synth("--n", "1", "--out", tmp_path / "new", "--model", "openai/scripted",
                     "--api-base", server.url, "--eager-ms", "0.01,200",
                     "--against", tmp_path / "suite", env=KEY)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = manifest(tmp_path / "new")
    assert [line["status"] for line in lines] == ["similarity", "similarity", "kept"]
    assert [line["max_similarity"] for line in lines[:2]] == [1.0, 1.0]
    assert [line["similar_to"] for line in lines[:2]] == ["level1/1_copy", "level1/2_original"]
    assert lines[2]["max_similarity"] < 0.9
