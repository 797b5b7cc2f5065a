"""On a CPU, the processes a warm pool started ahead are stopped while a judgement times and
continued after it (see `workers.quiet`). Real processes: the pool's, and a small tree."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from cudaopt.judge import JudgeOptions, Status, check, worker_env
from cudaopt.judge.workers.pool import JudgePool
from cudaopt.judge.workers.quiet import family, stopped

ZOO = Path(__file__).parent / "zoo"
#: a process that starts a child of its own, then both wait
TREE = ("import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', "
        "'import time; time.sleep(120)']); time.sleep(120)")


def _states(pids: list[int]) -> list[str]:
    return [Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] for pid in pids]


def test_a_process_and_the_ones_it_started_are_stopped_then_continued() -> None:
    parent = subprocess.Popen([sys.executable, "-c", TREE])
    try:
        deadline = time.monotonic() + 60
        while len(family([parent.pid])) < 2:
            assert time.monotonic() < deadline, "the child never started"
            time.sleep(0.05)
        with stopped([parent.pid]) as held:
            assert len(held) == 2 and held[0] == parent.pid
            assert _states(held) == ["T", "T"]
        assert "T" not in _states(held)
    finally:
        for pid in family([parent.pid])[::-1]:
            subprocess.run(["kill", "-9", str(pid)], check=False)
        parent.wait()


def test_the_next_candidate_process_waits_while_a_cpu_judgement_times() -> None:
    """The warm pool's spare candidate process (started as the judgement took the last one)
    is stopped, with what it runs in, through the timing rounds; afterwards it runs on and
    serves the next judgement."""
    options = JudgeOptions(device="cpu", compile_baseline=False, time_budget_s=1.0)
    pool = JudgePool(worker_env(options))
    seen: list[list[str]] = []

    def say(message: str) -> None:
        if message.startswith("timing: round") and pool._spare is not None:
            seen.append(_states(family([pool._spare.proc.pid])))

    try:
        first = check(ZOO / "task.py", ZOO / "correct.py", options, say, pool=pool)
        assert first.status is Status.OK, first.error or first.violations
        assert seen and all(states and set(states) == {"T"} for states in seen), seen
        spare = pool._spare
        assert spare is not None and "T" not in _states(family([spare.proc.pid]))
        second = check(ZOO / "task.py", ZOO / "correct.py", options, pool=pool)
        assert second.status is Status.OK, second.error or second.violations
    finally:
        pool.close()
