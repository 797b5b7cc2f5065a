"""A warm pool judges many candidates of one task with the same reference processes."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from cudaopt.judge import JudgeOptions, Status, check, worker_env
from cudaopt.judge.workers import template
from cudaopt.judge.workers.adopted import Adopted
from cudaopt.judge.workers.child import WorkerFailure
from cudaopt.judge.workers.pool import JudgePool, Loaded
from tests.conftest import EXAMPLES, held_only_its_own, prewarmed, worker_env_var

ZOO = Path(__file__).parent / "zoo"
TASK = ZOO / "task.py"


def test_pool_reuses_reference_workers_and_survives_failures(tmp_path: Path) -> None:
    opts = JudgeOptions(device="cpu", compile_baseline=False, time_budget_s=2.0)
    pool = JudgePool(worker_env(opts))
    try:
        first = check(TASK, ZOO / "correct.py", opts, pool=pool)
        assert first.status is Status.OK and first.eager is not None
        reference, baseline = pool.references(TASK, "cpu")
        pids = (reference.worker.proc.pid, baseline.worker.proc.pid)

        crash = check(TASK, ZOO / "crash.py", opts, pool=pool)
        assert crash.status is Status.CRASH
        wrong = check(TASK, ZOO / "wrong_values.py", opts, pool=pool)
        assert wrong.status is Status.WRONG and wrong.mismatch

        again = check(TASK, ZOO / "correct.py", opts, pool=pool)
        assert again.status is Status.OK and again.speedup_vs_eager is not None
        reference, baseline = pool.references(TASK, "cpu")
        assert (reference.worker.proc.pid, baseline.worker.proc.pid) == pids
    finally:
        pool.close()


def test_editing_the_task_retires_the_warm_workers(tmp_path: Path) -> None:
    task = tmp_path / "model.py"
    task.write_text(TASK.read_text())
    opts = JudgeOptions(device="cpu", profile=False)
    pool = JudgePool(worker_env(opts))
    try:
        assert check(task, ZOO / "correct.py", opts, pool=pool).status is Status.OK
        old = pool.references(task, "cpu")[0].worker
        task.write_text(TASK.read_text().replace("0.75", "0.5"))
        verdict = check(task, ZOO / "correct.py", opts, pool=pool)
        assert verdict.status is Status.OK  # the candidate reads scale from init inputs
        assert pool.references(task, "cpu")[0].worker is not old and not old.alive
    finally:
        pool.close()


def test_the_baseline_worker_started_ahead_is_prewarmed_for_compiling() -> None:
    """Only a process that will (or, in a warm pool on CUDA, may: see `JudgePool._swap`)
    compile the baselines pays for torch.compile's set-up, and it pays while it waits (its
    modules are imported before any task arrives)."""
    for keep_warm in (False, True):
        pool = JudgePool(worker_env(JudgeOptions(device="cpu")), keep_warm=keep_warm)
        try:
            pool.prestart(2, prewarm=True)
            baseline, reference = pool.new_reference("baseline"), pool.new_reference("ref")
            assert baseline is not reference
            for worker in (baseline, reference):  # alive and past its start: its own env
                with pytest.raises(WorkerFailure) as answered:
                    worker.call("no such request", 120)
                assert answered.value.kind == "KeyError", answered.value

            assert prewarmed(baseline)
            if keep_warm:  # a long-lived pool's: either is forked from the template, or told
                assert prewarmed(reference)
            else:  # a one-off judgement's are never forked, and only the baseline is told
                assert worker_env_var(reference, "CUDAOPT_PREWARM") == b""
            for worker in (baseline, reference):
                worker.close()
        finally:
            pool.close()


def test_a_baseline_process_that_will_not_compile_is_not_prewarmed() -> None:
    """Without a torch.compile baseline (`--no-compile-baseline`, `--no-profile`) nothing
    in the baseline process compiles: a new one skips torch.compile's set-up (5.7 s of a
    CPU judgement's wait, and cores the judgement needed)."""
    pool = JudgePool(worker_env(JudgeOptions(device="cpu")), keep_warm=False)
    try:
        eager_only = pool.new_reference("baseline", compiles=False)
        compiling = pool.new_reference("baseline")
        assert worker_env_var(eager_only, "CUDAOPT_PREWARM") == b""
        assert prewarmed(compiling)
        for worker in (eager_only, compiling):
            worker.close()
    finally:
        pool.close()
    opts = JudgeOptions(device="cpu", compile_baseline=False, time_budget_s=1.0, min_rounds=2,
                        breakdown=False)
    verdict = check(TASK, ZOO / "correct.py", opts)  # its own pool: every process new
    assert verdict.status is Status.OK and verdict.timing_rounds >= 2
    assert "baselines.boot" in verdict.phases_s and "baselines.prewarm" not in verdict.phases_s


def test_a_pool_ahead_starts_the_next_tasks_processes_during_a_judgement(tmp_path) -> None:
    """A bench's GPU slot judges one task after another: the reference and baseline
    processes the next task loads start while the current task is judged, not after."""
    other = tmp_path / "model.py"
    other.write_text(TASK.read_text().replace("0.75", "0.5"))
    opts = JudgeOptions(device="cpu", compile_baseline=False, time_budget_s=1.0)
    pool = JudgePool(worker_env(opts), ahead=True)
    try:
        pool.prestart(2)
        assert check(TASK, ZOO / "correct.py", opts, pool=pool).status is Status.OK
        first_done = time.time()
        assert check(other, ZOO / "correct.py", opts, pool=pool).status is Status.OK
        loaded = [x for x in pool.references(other, "cpu") if x is not None]
        assert len(loaded) == 2
        assert all(x.worker.spawned_at < first_done for x in loaded)
    finally:
        pool.close()


def test_a_released_pool_lets_its_task_go_and_keeps_what_it_started_ahead() -> None:
    """A lane beside a judgement that needs the device alone is released: its loaded
    reference goes (it holds the task's memory), its spare processes stay, and its next
    judgement's candidate is one started before that judgement, as the candidate's import
    parts show (`boot_waited` is the part of its start-up inside the judgement)."""
    opts = JudgeOptions(device="cpu", profile=False)
    pool = JudgePool(worker_env(opts), ahead=True)
    try:
        first = check(TASK, ZOO / "correct.py", opts, pool=pool)
        assert first.status is Status.OK
        parts = first.phases_s
        assert parts["load.candidate.import.boot_waited"] >= parts["load.candidate.import.boot"]
        loaded = pool.references(TASK, "cpu")[0].worker
        spares = pool.spares.pids()
        assert spares and loaded.alive
        pool.release()
        assert not loaded.alive and all(pid in pool.spares.pids() for pid in spares)
        again = check(TASK, ZOO / "correct.py", opts, pool=pool)
        assert again.status is Status.OK
        parts = again.phases_s
        assert parts.get("load.candidate.import.boot_waited", 0.0) < parts[
            "load.candidate.import.boot"]
        assert pool.references(TASK, "cpu")[0].worker is not loaded
    finally:
        pool.close()


def test_a_worker_started_in_another_folder_runs_the_judges_own_cudaopt(tmp_path) -> None:
    """A sandbox starts the candidate worker in its workspace: `python -m` there finds no
    cudaopt run from a checkout unless the worker is told where the judge's own is."""
    import cudaopt
    from cudaopt.judge.workers.child import Worker

    given: dict[str, str] = {}  # the environment the worker is started with

    def elsewhere(argv: list[str], env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
        given.update(env)
        return ["env", "-C", str(tmp_path), *argv], env

    worker = Worker("candidate", tmp_path / "worker.log", {}, wrap=elsewhere)
    try:
        assert worker.call("exit", 60) == {"ok": True}  # it started and answered
        parent = str(Path(cudaopt.__file__).resolve().parents[1])
        if parent not in __import__("site").getsitepackages():  # run from a checkout
            assert given["PYTHONPATH"].split(os.pathsep)[0] == parent
    finally:
        worker.close()


def test_a_profiled_baseline_process_is_never_timed_again() -> None:
    """On CUDA a process once profiled launches slower ever after: the pool never times such
    a baseline process again. It trades roles with the reference process (both hold the
    task's model), or, with no reference to trade with, goes, and its successor (prewarmed
    to compile) starts the moment it is let go."""
    pool = JudgePool(worker_env(JudgeOptions(device="cpu")))
    try:
        profiled = pool.new_reference("baseline")
        profiled.profiled = True
        pool.keep(None, Loaded(profiled, {}))
        assert not pool.holds(profiled)
        let_go = time.time()
        successor = pool.new_reference("baseline")
        assert successor is not profiled and successor.spawned_at <= let_go
        assert prewarmed(successor)
        reference = pool.new_reference("ref")
        profiled_too = pool.new_reference("baseline")
        profiled_too.profiled = True
        pool.keep(Loaded(reference, {"device_name": "cpu"}, device_gib=0.5),
                  Loaded(profiled_too, {}, device_gib=18.0))
        held_reference, held_baseline = pool._reference, pool._baseline
        assert held_reference.worker is profiled_too and held_reference.info["device_name"]
        assert held_baseline.worker is reference and held_baseline.compiled is None
        # what each process holds goes with it: a lender bounds what it keeps by the sum
        assert (held_reference.device_gib, held_baseline.device_gib) == (18.0, 0.5)
        for worker in (reference, profiled_too):
            worker.close()
        for worker in (profiled, successor):
            worker.close()
    finally:
        pool.close()


def test_a_worker_started_anew_is_a_new_program_holding_only_its_pipes_and_log(
        tmp_path: Path) -> None:
    """A candidate, and a trusted worker not forked (a process's first one-off judgement's,
    or any with forking off), are new programs (their own command line, no page of their
    parent's) holding no descriptor of the parent's but their two pipes and their log, not
    even one the parent left inheritable, as it would a reference output's file. (Forked
    trusted workers come from a template that never held a task:
    tests/judge/test_template.py.)"""
    outputs = open(tmp_path / "reference_outputs.pt", "wb")  # what a judge's parent may hold
    os.set_inheritable(outputs.fileno(), True)
    env = {**worker_env(JudgeOptions(device="cpu")), template.FORK_ENV: "0"}
    pool = JudgePool(env, isolate=False, keep_warm=False)  # isolate=False: its own fds
    try:
        for worker in (pool.candidate(), pool.new_reference("ref")):
            with pytest.raises(WorkerFailure):  # answered: past its imports and their files
                worker.call("no such request", 120)
            argv = Path(f"/proc/{worker.proc.pid}/cmdline").read_bytes().split(b"\0")
            assert argv[1:4] == [b"-m", b"cudaopt.judge.roles.worker", worker.role.encode()]
            assert held_only_its_own(worker)
            worker.close()
    finally:
        outputs.close()
        pool.close()


def test_a_confined_candidate_outlives_the_thread_that_started_it() -> None:
    """The sandbox dies with the thread that started it (bubblewrap's --die-with-parent is
    the kernel's per-thread PR_SET_PDEATHSIG), and the warm judge, `cudaopt serve` and the
    reward service use their pools from short-lived threads: the candidate being judged,
    and the spare started for the next judgement, must live on after that thread."""
    import threading

    pool = JudgePool(worker_env(JudgeOptions(device="cpu")), isolate=True)
    if not pool.isolation.isolated:
        pytest.skip(f"no sandbox to die with its parent: {pool.isolation.how}")
    try:
        taken: list = []

        def judgement() -> None:  # takes a candidate, starts the spare, and lasts a while
            taken.append(pool.candidate())
            time.sleep(1.5)  # the sandboxes have asked to die with their parent by then

        thread = threading.Thread(target=judgement)
        thread.start()
        thread.join()
        spare_started = time.time()
        time.sleep(1.0)  # the kernel's signal comes at once
        assert taken[0].alive, taken[0].log_tail()
        spare = pool.candidate()  # the one started for the next judgement, in that thread
        assert spare.alive and spare.spawned_at < spare_started, spare.log_tail()
        for worker in (taken[0], spare):
            worker.close()
    finally:
        pool.close()


def test_closing_a_pool_kills_its_processes_held_in_reserve_without_waiting() -> None:
    """A spare still importing torch is not asked to exit (which waits for the import): it
    is killed."""
    opts = JudgeOptions(device="cpu", profile=False)
    pool = JudgePool(worker_env(opts))
    pool.prestart(1)
    spares = [pool.spares.candidate, *pool.spares.fresh]
    assert all(worker is not None and worker.alive for worker in spares)
    pool.close()
    assert not any(worker.alive for worker in spares)
    assert all(worker.proc.returncode == -9 for worker in spares  # where its status is ours
               if not isinstance(worker.proc, Adopted))


def test_a_task_prepared_ahead_is_timed_by_the_baseline_process_that_compiled_it(
        tmp_path: Path) -> None:
    """`prepare` (a run calls it as it starts) returns at once with the task's baseline
    process loading and compiling; the first timed judgement uses that process."""
    from cudaopt.judge import prepare

    opts = JudgeOptions(device="cpu", time_budget_s=2.0)
    pool = JudgePool(worker_env(opts))
    try:
        assert prepare(TASK, opts, pool)
        _, baseline = pool.references(TASK, "cpu")
        assert baseline is not None and baseline.compiled == opts.compile_mode
        assert baseline.owed, "its load and compile are still under way"
        verdict = check(TASK, ZOO / "correct.py", opts, pool=pool)
        assert verdict.status is Status.OK and verdict.compiled_baseline is not None
        assert pool.references(TASK, "cpu")[1].worker is baseline.worker
    finally:
        pool.close()


def test_nothing_is_prepared_for_a_one_off_or_busy_pool_or_a_task_that_is_none(
        tmp_path: Path) -> None:
    from cudaopt.judge import prepare

    opts = JudgeOptions(device="cpu")
    one_off = JudgePool(worker_env(opts), keep_warm=False)
    pool = JudgePool(worker_env(opts))
    bad = tmp_path / "model.py"
    bad.write_text("import torch\n")  # no Model, no get_inputs
    try:
        assert not prepare(TASK, opts, one_off)
        assert not prepare(bad, opts, pool)
        assert pool.references(bad, "cpu") == (None, None)
        with pool.busy:
            assert not prepare(TASK, opts, pool)
        assert pool.references(TASK, "cpu") == (None, None)
    finally:
        one_off.close()
        pool.close()


def test_a_held_process_reniced_while_it_waited_is_not_used_again(tmp_path: Path) -> None:
    """Any process of the judge's user can renice a pool's warm baseline between two
    judgements; so slowed, it would flatter every later candidate."""
    opts = JudgeOptions(device="cpu", compile_baseline=False, time_budget_s=2.0)
    pool = JudgePool(worker_env(opts))
    try:
        assert check(TASK, ZOO / "correct.py", opts, pool=pool).status is Status.OK
        reference, baseline = pool.references(TASK, "cpu")
        assert reference is not None and baseline is not None
        for thread in os.listdir(f"/proc/{baseline.worker.proc.pid}/task"):
            os.setpriority(os.PRIO_PROCESS, int(thread), 19)
        verdict = check(TASK, ZOO / "correct.py", opts, pool=pool)
        assert verdict.status is Status.OK, verdict.error
        assert not any("rescheduled" in w for w in verdict.warnings), verdict.warnings
        now = pool.references(TASK, "cpu")
        assert now[0] is not None and now[0].worker is reference.worker
        assert now[1] is not None and now[1].worker is not baseline.worker
        assert not baseline.worker.alive
    finally:
        pool.close()


def test_a_reference_process_busy_with_a_command_is_closed_without_finishing_it(
        tmp_path) -> None:
    """Closing a trusted process does not wait for its command (a compile, a load): it runs
    no candidate code that deserves a turn to exit. Its next load, of a task that writes a
    file a second into its import, never gets that far."""
    from cudaopt.judge.workers.child import Worker

    quick, slow, marker = tmp_path / "quick.py", tmp_path / "slow.py", tmp_path / "finished"
    task = (EXAMPLES / "fused_swish_cpu" / "model.py").read_text()
    quick.write_text(task)
    slow.write_text(f"import pathlib, time\ntime.sleep(1)\n"
                    f"pathlib.Path({str(marker)!r}).write_text('x')\n{task}")
    worker = Worker("reference", tmp_path / "worker.log", {})
    args = {"device": "cpu", "init_seed": 1, "state_path": str(tmp_path / "state.pt"),
            "threads": 1}
    try:
        worker.call("load", 120, task=str(quick), **args)  # started and loaded: it listens
        worker.send("load", task=str(slow), **args)
    finally:
        worker.close()
    time.sleep(3)
    assert not marker.exists()
