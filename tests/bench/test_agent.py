"""Agent mode: the whole optimize loop per task, a scripted model behind a real local
OpenAI-compatible server, judged for real on the CPU; each task gets its own run folder
under BENCH/runs/ and nothing is committed. The bench is interrupted while the model is
thinking, and the next bench resumes that run where it stopped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from tests.agent.conftest import GOOD_FILES, source
from tests.bench.conftest import FAST, bench, lines
from tests.conftest import ROOT
from tests.fakeopenai import FakeOpenAI, Reply, call, say

ENV = {"OPENAI_API_KEY": "sk-dummy-for-the-fake-server", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def _write(name: str) -> Reply:
    return call("write", path=name, content=source(name))


def test_agent_mode_runs_the_loop_per_task_and_resumes(suite: Path, work: Path,
                                                      tmp_path: Path) -> None:
    asked, release = threading.Event(), threading.Event()

    def thinking(messages: list[dict[str, Any]]) -> Reply:
        asked.set()  # the bench is interrupted while this request is open
        release.wait(timeout=120)
        return say("(never read)")

    out = tmp_path / "agent"
    task = suite / "level1" / "1_prefix_sum.py"
    argv = [task, "--model", "openai/fake-kernel-model", "--max-steps", "8", "--out", out,
            "--work", work, *FAST]
    with FakeOpenAI([_write(GOOD_FILES[0]), thinking]) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "cudaopt.cli", "bench", *map(str, argv), "--api-base",
             server.url], cwd=ROOT, env={**os.environ, **ENV},
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert asked.wait(timeout=600), "the model was never asked a second time"
        time.sleep(1)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        release.set()
    assert proc.returncode == 130, err
    assert not (out / "results.jsonl").exists() or not lines(out)
    run = out / "runs" / "level1" / "1_prefix_sum"
    assert json.loads((run / "meta.json").read_text())["status"] == "running"

    script = [*(_write(name) for name in GOOD_FILES[1:]),
              say("Done: a running sum in one C++ extension."), say("No further gain in sight.")]
    with FakeOpenAI(script) as server:
        again = bench(*argv, "--api-base", server.url, env=ENV)
    assert not server.errors
    assert again.returncode == 0, again.stdout + again.stderr
    line = lines(out)["level1/1_prefix_sum"]
    assert line["mode"] == "agent" and line["infra_status"] == "ok"
    assert line["correct"] and line["reward"] == 3.0, line
    assert line["steps"] >= 4 and line["stop_reason"] == "done"
    assert Path(line["run_dir"]) == run  # the same run, resumed
    assert json.loads((run / "final_verdict.json").read_text())["accepted"]
    meta = json.loads((run / "meta.json").read_text())
    assert meta["status"] == "accepted" and meta["branch"] is None and meta["commit"] is None
    assert not (suite / ".git").exists()
