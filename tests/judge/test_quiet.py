"""On a CPU, the processes a warm pool started ahead are stopped while a judgement times and
continued after it; on a GPU they are kept off the timing thread's CPU (see `workers.quiet`).
Real processes: the pool's, and a small tree."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cudaopt.judge import JudgeOptions, Status, check, worker_env
from cudaopt.judge.workers import proctable, template
from cudaopt.judge.workers.pool import JudgePool
from cudaopt.judge.workers.quiet import family, kept_off, stopped

from ..conftest import EXAMPLES

ZOO = Path(__file__).parent / "zoo"
#: a process that starts a child of its own, then both wait
TREE = ("import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', "
        "'import time; time.sleep(120)']); time.sleep(120)")

#: a `sitecustomize` that holds a template process at its start, still starting for minutes
SLOW_TEMPLATE = """import pathlib, time
if b"cudaopt.judge.roles.template" in pathlib.Path("/proc/self/cmdline").read_bytes():
    time.sleep(600)
"""


#: a process with a second thread, that starts a child after a moment (inside the block)
THREADS = ("import subprocess, sys, threading, time; "
           "threading.Thread(target=time.sleep, args=(120,), daemon=True).start(); "
           "time.sleep(float(sys.argv[1])); "
           "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)']); "
           "time.sleep(120)")


def _cpus(tid: int) -> set[int]:
    return os.sched_getaffinity(tid)


def _threads(pids: list[int]) -> list[int]:
    return [int(t) for pid in pids for t in os.listdir(f"/proc/{pid}/task")]


def _states(pids: list[int]) -> list[str]:
    return [Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] for pid in pids]


#: a process that starts a sleeping child every 2 ms, up to 300 of them
FORKING = ("import os, time\n"
           "for _ in range(300):\n"
           "    if os.fork() == 0:\n"
           "        time.sleep(120); os._exit(0)\n"
           "    time.sleep(0.002)\n"
           "time.sleep(120)")


@pytest.fixture(params=["listed", "scanned", "emptied"])
def lists_children(request: pytest.FixtureRequest,
                   monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The holds three ways: by the kernel's lists of children; where it keeps none, by
    reads of all of /proc; and where it keeps them empty (as an emulated /proc may), by
    those reads once the lists have been found wanting."""
    if request.param != "scanned" and not proctable.LISTS_CHILDREN:
        pytest.skip("this kernel keeps no lists of children (CONFIG_PROC_CHILDREN)")
    monkeypatch.setattr(proctable, "LISTS_CHILDREN", request.param != "scanned")
    monkeypatch.setattr(proctable, "LISTS_AGREED", [])
    if request.param == "emptied":
        monkeypatch.setattr(proctable, "children", lambda pid: [])
    yield
    assert proctable.LISTS_AGREED == {"listed": [True], "scanned": [],
                                      "emptied": [False]}[request.param]


@pytest.mark.usefixtures("lists_children")
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


@pytest.mark.usefixtures("lists_children")
def test_a_process_starting_others_as_it_is_held_has_each_of_them_stopped() -> None:
    """The hold stops what it found and waits for it before it looks for their children, so
    a child started while the hold begins is not missed (one read of /proc, then the
    signals, missed one in most holds)."""
    parent = subprocess.Popen([sys.executable, "-c", FORKING], start_new_session=True)
    try:
        while len(family([parent.pid])) < 20:
            time.sleep(0.01)
        for _ in range(20):
            with stopped([parent.pid]):
                tree = family([parent.pid])
                assert set(_states(tree)) <= {"T", "Z"}, (len(tree), _states(tree))
            time.sleep(0.005)
    finally:
        os.killpg(parent.pid, signal.SIGKILL)  # its children too, however many it started
        parent.wait()


def test_what_a_pool_started_ahead_waits_while_a_cpu_judgement_times(tmp_path: Path) -> None:
    """The warm pool's spare candidate process (started as the judgement took the last one)
    and the template its later reference processes fork from, while that still imports (a
    warm pool's first judgement starts it; held at its start here, so that it is still
    starting then), are stopped, with what they run, through the timing rounds; afterwards
    they run on, and the spare serves the next judgement."""
    (tmp_path / "sitecustomize.py").write_text(SLOW_TEMPLATE)
    options = JudgeOptions(device="cpu", compile_baseline=False, time_budget_s=1.0)
    env = {**worker_env(options), "PYTHONPATH": os.pathsep.join(
        [str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])])}
    before = set(template.template_pids())
    pool = JudgePool(env)
    spares: list[list[str]] = []
    templates: list[list[str]] = []

    def say(message: str) -> None:
        if message.startswith("timing: round") and pool.spares.candidate is not None:
            spares.append(_states(family([pool.spares.candidate.proc.pid])))
            templates.append(_states(sorted(set(template.template_pids()) - before)))

    try:
        first = check(ZOO / "task.py", ZOO / "correct.py", options, say, pool=pool)
        assert first.status is Status.OK, first.error or first.violations
        assert spares and all(states and set(states) == {"T"} for states in spares), spares
        assert all(states == ["T"] for states in templates), templates
        spare = pool.spares.candidate
        assert spare is not None and "T" not in _states(family([spare.proc.pid]))
        started = sorted(set(template.template_pids()) - before)
        assert started and "T" not in _states(started)
        second = check(ZOO / "task.py", ZOO / "correct.py", options, pool=pool)
        assert second.status is Status.OK, second.error or second.violations
    finally:
        pool.close()
        template.close_all()


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to move between")
def test_a_process_its_threads_and_a_child_started_meanwhile_leave_the_timing_cpu() -> None:
    """Every thread of the tree leaves the timing CPU for the block, a child started inside
    it too, and all get their CPUs back after it."""
    wide = os.sched_getaffinity(0)
    timing = max(wide)
    parent = subprocess.Popen([sys.executable, "-c", THREADS, "1.5"])
    try:
        deadline = time.monotonic() + 60
        while len(_threads([parent.pid])) < 2:
            assert time.monotonic() < deadline, "the thread never started"
            time.sleep(0.05)
        with kept_off([parent.pid], {timing}) as moved:
            assert len(moved) >= 2 and set(moved) <= set(_threads([parent.pid]))
            while len(family([parent.pid])) < 2:
                assert time.monotonic() < deadline, "the child never started"
                time.sleep(0.05)
            tree = _threads(family([parent.pid]))
            assert all(_cpus(tid) == wide - {timing} for tid in tree)
        assert all(_cpus(tid) == wide for tid in _threads(family([parent.pid])))
    finally:
        for pid in family([parent.pid])[::-1]:
            subprocess.run(["kill", "-9", str(pid)], check=False)
        parent.wait()


@pytest.mark.gpu
def test_what_a_pool_started_ahead_runs_off_the_timing_cpu_while_a_cuda_judgement_times(
        ) -> None:
    """On a GPU the spare candidate process is not stopped: it runs on through the timing
    rounds on every CPU but the one the timed calls were pinned to, and has that one back
    afterwards."""
    options = JudgeOptions(device="cuda", compile_baseline=False, time_budget_s=1.0)
    pool = JudgePool(worker_env(options))
    seen: list[tuple[str, set[int]]] = []

    def say(message: str) -> None:
        spare = pool.spares.candidate
        if message.startswith("timing: round") and spare is not None:
            tree = _threads(family([spare.proc.pid]))
            seen.append((_states([spare.proc.pid])[0], set().union(*map(_cpus, tree))))

    try:
        example = EXAMPLES / "fused_swish_cuda"
        verdict = check(example / "model.py", example / "model_new.py", options, say, pool=pool)
        assert verdict.status is Status.OK, verdict.error or verdict.violations
        cpu = verdict.timing_cpu
        assert cpu is not None and seen
        assert all(state != "T" and cpu not in cpus for state, cpus in seen), (cpu, seen)
        spare = pool.spares.candidate
        assert spare is not None and cpu in _cpus(spare.proc.pid)
    finally:
        pool.close()
