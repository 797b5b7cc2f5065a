"""A long-lived pool's trusted workers are forked warm from a template that never held a task."""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from cudaopt.judge import JudgeOptions, Status, check, worker_env
from cudaopt.judge.workers import template
from cudaopt.judge.workers.child import WorkerFailure
from cudaopt.judge.workers.pool import JudgePool
from tests.conftest import ROOT, forked, forked_reference, held_only_its_own

MARK = 0.123456789  # every element of the task's output: bytes no process holds by chance
TASK = f'''import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x * 0 + {MARK}


def get_inputs():
    return [torch.randn(4096)]


def get_init_inputs():
    return []
'''
NEEDLE = struct.pack("f", MARK) * 64
CANDIDATE = TASK.replace("class Model(", "class ModelNew(")


def _holds(pid: int, needle: bytes) -> bool:
    """Whether any readable page of process `pid` holds `needle`."""
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
        for line in maps:
            span, perms = line.split()[:2]
            if not perms.startswith("r"):
                continue
            start, end = (int(x, 16) for x in span.split("-"))
            try:
                mem.seek(start)
                if needle in mem.read(end - start):
                    return True
            except (OSError, ValueError, OverflowError):
                continue  # [vvar] and the like
    return False


def test_a_trusted_worker_forked_warm_is_ready_at_once_and_inherits_nothing(
        tmp_path: Path) -> None:
    """Ready in under a second; no descriptor of the judge's but its pipes and log, not even
    an inheritable one; no page holding a reference output of a judgement that ran before."""
    (tmp_path / "task.py").write_text(TASK)
    (tmp_path / "cand.py").write_text(CANDIDATE)
    outputs = open(tmp_path / "reference_outputs.pt", "wb")  # what a judge's parent may hold
    os.set_inheritable(outputs.fileno(), True)
    opts = JudgeOptions(device="cpu", profile=False, allow=["*"])
    pool = JudgePool(worker_env(opts), isolate=False)
    try:
        forked_reference(pool).discard()
        verdict = check(tmp_path / "task.py", tmp_path / "cand.py", opts, pool=pool)
        assert verdict.status is Status.OK, verdict.error
        shown = torch.full((4096,), MARK)  # the scan sees an output that is alive
        assert _holds(os.getpid(), NEEDLE)
        del shown
        started = time.monotonic()
        worker = forked_reference(pool)
        with pytest.raises(WorkerFailure) as answered:
            worker.call("no such request", 60)
        assert answered.value.kind == "KeyError"
        assert time.monotonic() - started < 1.0
        assert held_only_its_own(worker)
        assert _holds(worker.proc.pid, b"cudaopt.judge.roles.reference")  # the template's
        assert not _holds(worker.proc.pid, NEEDLE)
        worker.close()
    finally:
        outputs.close()
        pool.close()


def test_a_killed_template_costs_only_its_own_start() -> None:
    """The worker asked for next starts as a new process and works; a new template serves
    the ones after it."""
    pool = JudgePool(worker_env(JudgeOptions(device="cpu")), isolate=False)
    try:
        forked_reference(pool).discard()
        for pid in template.template_pids():
            os.kill(pid, signal.SIGKILL)
        time.sleep(0.5)
        worker = pool.new_reference("ref")
        assert not forked(worker)
        with pytest.raises(WorkerFailure) as answered:
            worker.call("no such request", 120)
        assert answered.value.kind == "KeyError"
        worker.discard()
        forked_reference(pool).discard()
    finally:
        pool.close()


def test_forking_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(template.FORK_ENV, "0")
    pool = JudgePool(worker_env(JudgeOptions(device="cpu")), isolate=False)
    try:
        worker = pool.new_reference("ref")
        assert not forked(worker)
        worker.discard()
    finally:
        pool.close()


def test_a_fork_takes_the_judges_scheduling_not_what_the_template_was_given() -> None:
    """Any process of the judge's user, an unisolated candidate among them, can renice the
    template or move it to SCHED_IDLE; its forks still run as the judge does, so no later
    judgement times its baselines slowed down."""
    pool = JudgePool(worker_env(JudgeOptions(device="cpu")), isolate=False)
    try:
        forked_reference(pool).discard()
        for pid in template.template_pids():
            for thread in os.listdir(f"/proc/{pid}/task"):
                os.sched_setscheduler(int(thread), os.SCHED_IDLE, os.sched_param(0))
                os.setpriority(os.PRIO_PROCESS, int(thread), 19)
        worker = forked_reference(pool)
        assert os.getpriority(os.PRIO_PROCESS, worker.proc.pid) == os.getpriority(
            os.PRIO_PROCESS, 0)
        assert os.sched_getscheduler(worker.proc.pid) == os.sched_getscheduler(0)
        worker.discard()
    finally:
        pool.close()


#: One-off judgements in a row in a new process, as a script calling `check` in a loop makes
#: them; per judgement, the trusted workers started as new Pythons (not forked).
ONE_OFF_LOOP = """
import json, sys, time
from pathlib import Path
from cudaopt.judge import JudgeOptions, check
from cudaopt.judge.workers import spawner, template

started, popen = [], spawner.popen
def counted(argv, **kwargs):
    started.append(argv[-1])
    return popen(argv, **kwargs)
spawner.popen = counted
folder = Path(sys.argv[1])
for _ in range(3):
    started.clear()
    verdict = check(folder / "model.py", folder / "model_new.py", JudgeOptions(
        device="cpu", time_budget_s=1.0, compile_baseline=False))
    while template.starting_pids():
        time.sleep(0.1)  # the next judgement finds the template ready, as a loop's later do
    print(json.dumps({"ok": verdict.correct, "fresh": started.count("reference")}))
"""


def test_a_process_judging_again_forks_its_one_off_judgements_trusted_workers(
        tmp_path: Path) -> None:
    """Its first one-off judgement starts its trusted workers as new processes (a template
    would not live to be used); after that the process is judging in a loop, and they are
    forked warm from a template."""
    (tmp_path / "model.py").write_text(TASK)
    (tmp_path / "model_new.py").write_text(CANDIDATE)
    done = subprocess.run([sys.executable, "-c", ONE_OFF_LOOP, str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    rounds = [json.loads(line) for line in done.stdout.splitlines()]
    assert all(r["ok"] for r in rounds), rounds
    assert rounds[0]["fresh"] >= 1 and rounds[1]["fresh"] >= 1, rounds
    assert rounds[2]["fresh"] == 0, rounds
