"""Agent mode: the whole optimize loop per task, a scripted model behind a real local
OpenAI-compatible server, judged for real on the CPU; each task gets its own run folder
under BENCH/runs/ and nothing is committed."""

from __future__ import annotations

import json
from pathlib import Path

from tests.agent.conftest import GOOD_FILES, source
from tests.bench.conftest import FAST, bench, lines
from tests.fakeopenai import FakeOpenAI, call, say

ENV = {"OPENAI_API_KEY": "sk-dummy-for-the-fake-server", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def test_agent_mode_runs_the_loop_per_task(suite: Path, work: Path, tmp_path: Path) -> None:
    script = [*(call("write", path=name, content=source(name)) for name in GOOD_FILES),
              say("Done: A @ (B @ V) in one C++ extension."), say("No further gain in sight.")]
    out = tmp_path / "agent"
    task = suite / "level1" / "1_matchain.py"
    with FakeOpenAI(script) as server:
        proc = bench(task, "--model", "openai/fake-kernel-model", "--api-base", server.url,
                     "--max-steps", "8", "--out", out, "--work", work, *FAST, env=ENV)
    assert not server.errors
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = lines(out)["level1/1_matchain"]
    assert line["mode"] == "agent" and line["infra_status"] == "ok"
    assert line["correct"] and line["reward"] == 3.0, line
    assert line["steps"] >= 4 and line["stop_reason"] == "done"
    run = Path(line["run_dir"])
    assert run == out / "runs" / "level1" / "1_matchain"
    assert json.loads((run / "final_verdict.json").read_text())["accepted"]
    meta = json.loads((run / "meta.json").read_text())
    assert meta["status"] == "accepted" and meta["branch"] is None and meta["commit"] is None
    assert not (suite / ".git").exists()
