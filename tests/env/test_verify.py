"""`/verify` over real HTTP and a real slot process: the verdicts `cudaopt check` gives,
backpressure instead of a hang, and a lost worker reported as the machine's failure."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cudaopt.env import EnvClient, EnvError
from cudaopt.executor import Sources
from tests.conftest import ROOT
from tests.env.conftest import ADVERSARIAL, PREFIX, Service, swish_item

#: A task whose reference takes a while to build: keeps a candidate in flight on the slot.
SLOW_TASK = """import time
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        time.sleep({sleep_s})

    def forward(self, x):
        return x + 1


def get_inputs():
    return [torch.randn(8)]


def get_init_inputs():
    return []
"""
SLOW_CANDIDATE = SLOW_TASK.replace("class Model(", "class ModelNew(")


def _slow_item(sleep_s: int) -> dict:
    return {"task": SLOW_TASK.format(sleep_s=sleep_s), "task_name": f"slow_{sleep_s}.py",
            "model_new": SLOW_CANDIDATE.format(sleep_s=0)}


def _hack_item() -> dict:
    return {"task": (ADVERSARIAL / "task.py").read_text(), "task_name": "swish_task.py",
            "model_new": (ADVERSARIAL / "patch_judge.py").read_text()}


def _check(task: Path, candidate: Path) -> dict:
    proc = subprocess.run([sys.executable, "-m", "cudaopt.cli", "check", str(task),
                           str(candidate), "--device", "cpu", "--trials", "2",
                           "--time-budget", "2", "--json", "-"],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.stdout.startswith("{"), proc.stdout[-2000:] + proc.stderr[-2000:]
    return json.loads(proc.stdout)


def test_a_verify_batch_agrees_with_check(service: Service, client: EnvClient) -> None:
    items = [swish_item(PREFIX), _hack_item()]
    results = client.verify(items)
    good, hack = results
    assert good["infra_error"] is None and good["correct"] and good["reward"] == 3.0, (
        {k: good["verdict"].get(k) for k in ("warnings", "speedup_vs_eager_low",
                                             "speedup_vs_compile_low", "noisy", "isolated",
                                             "kernels_ran")},
        {k: v for k, v in (good["verdict"].get("warm") or {}).items() if "speedup" in k})
    assert hack["infra_error"] is None and hack["reward"] == -1.0 and not hack["correct"]
    assert any("tampering" in v for v in hack["verdict"]["violations"])
    for item, result in zip(items, results, strict=True):
        sources = Sources(item["task_name"], item["task"], item["model_new"],
                          item.get("kernels", {}))
        task, candidate = sources.materialize(service.root / "state" / "executor")
        alone = _check(task, candidate)  # the same files, so the same (warm) build
        for field in ("status", "compiled", "correct"):
            assert alone[field] == result["verdict"][field], field
        assert (alone["reward"] > 0) == (result["reward"] > 0)
        assert bool(alone["violations"]) == bool(result["verdict"]["violations"])


def _verify_in_background(client: EnvClient, items: list[dict]) -> tuple[threading.Thread,
                                                                          list]:
    out: list = []
    thread = threading.Thread(target=lambda: out.append(client.verify(items)))
    thread.start()
    return thread, out


def _wait_pending(client: EnvClient, count: int) -> None:
    deadline = time.monotonic() + 60
    while client.health()["verify"]["pending"] < count:
        assert time.monotonic() < deadline, "the batch never reached the queue"
        time.sleep(0.1)


def test_a_full_queue_answers_busy_with_retry_after(service: Service) -> None:
    client = service.client(busy_wait_s=0)
    thread, out = _verify_in_background(client, [_slow_item(15)])
    _wait_pending(client, 1)
    with pytest.raises(EnvError) as busy:  # room for 2 candidates, 1 taken
        client.verify([swish_item(), swish_item()])
    assert busy.value.status == 503 and busy.value.code == "busy"
    assert busy.value.retry_after_s >= 1 and "retry after" in str(busy.value)
    with pytest.raises(EnvError, match="split the batch") as too_many:
        client.verify([swish_item()] * 3)
    assert too_many.value.status == 400
    thread.join(timeout=600)
    assert out and out[0][0]["infra_error"] is None  # the waiting batch was not harmed
    assert client.health()["verify"]["pending"] == 0


def test_a_killed_worker_is_an_infrastructure_error_not_minus_one(service: Service,
                                                                   client: EnvClient) -> None:
    thread, out = _verify_in_background(client, [_slow_item(120)])
    _wait_pending(client, 1)
    time.sleep(3)  # the slot has taken it (nothing else queued, nothing to build)
    (slot,) = service.children("cudaopt.executor")
    os.kill(slot, signal.SIGKILL)
    thread.join(timeout=300)
    (result,) = out[0]
    assert result["reward"] is None and result["correct"] is False
    assert "process died" in result["infra_error"]
    again = client.verify([_hack_item()])[0]  # a fresh slot process serves the next one
    assert again["infra_error"] is None and again["reward"] == -1.0
