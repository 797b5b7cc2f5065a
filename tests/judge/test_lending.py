"""A task's loaded reference and baseline processes outlive the pool that loaded them: the
machine judge keeps them and lends them to the next pool of the task, in another process
(a later bench, run or reward service) or its own `cudaopt check`. Real processes: the
pools' own, the machine judge, their workers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cudaopt.judge import JudgeOptions, JudgePool, check, worker_env
from cudaopt.judge.serving.lender import Store
from tests.conftest import ROOT
from tests.judge.test_machine_judge import ZOO, judge_folder, judges, stop_judges

OPTIONS = JudgeOptions(device="cpu", time_budget_s=2.0)
#: A pool in a process of its own, lending through the machine judge, as a bench's slot
#: or an agent run's does; with "die", it exits holding what it borrowed.
POOL = """
import json, os, sys
from pathlib import Path
from cudaopt.judge import JudgeOptions, JudgePool, check, machine_lender, worker_env
options = JudgeOptions(device=sys.argv[4], time_budget_s=2.0)
pool = JudgePool(worker_env(options))
pool.lender = machine_lender()
verdict = check(Path(sys.argv[1]), Path(sys.argv[2]), options, pool=pool)
held = [held.worker.proc.pid for held in (pool._reference, pool._baseline) if held]
print(json.dumps({"correct": verdict.correct, "phases": verdict.phases_s, "held": held,
                  "kernels_ran": verdict.kernels_ran}))
sys.stdout.flush()
if sys.argv[3] == "die":
    os._exit(1)
pool.close()
"""


@pytest.fixture
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    env = {**os.environ, "CUDAOPT_WARM_JUDGE": "1", "TMPDIR": str(tmp_path),
           "CUDAOPT_WARM_IDLE_S": "120"}
    yield env
    stop_judges(tmp_path)


def _pool(env: dict[str, str], then: str = "close", task: Path = ZOO / "task.py",
          candidate: Path = ZOO / "correct.py", device: str = "cpu") -> dict:
    proc = subprocess.run([sys.executable, "-c", POOL, str(task), str(candidate), then,
                           device], env=env, capture_output=True, text=True, timeout=900)
    assert proc.stdout.startswith("{"), proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(proc.stdout.splitlines()[0])


def _cli_check(env: dict[str, str], task: Path, candidate: Path,
               tmp_path: Path) -> tuple[dict, str]:
    """`cudaopt check` as a user runs it: its verdict and what it said on stderr."""
    argv = [sys.executable, "-m", "cudaopt.cli", "check", str(task), str(candidate),
            "--device", "cpu", "--time-budget", "2", "--json", str(tmp_path / "check.json")]
    ran = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=900)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return json.loads((tmp_path / "check.json").read_text()), ran.stderr


def _judge_log(env: dict[str, str]) -> str:
    """What the machine judges started under this test said (why a pair was not kept)."""
    folder = judge_folder(Path(env["TMPDIR"]))
    return "".join(log.read_text() for log in sorted(folder.glob("judge-*.log")))


def _loaded(phases: dict[str, float]) -> bool:
    return any(k.startswith("load.reference") for k in phases)


def _gone(pid: int, within_s: float = 30.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state == "Z":
            return True
        time.sleep(0.2)
    return False


def test_a_pair_outlives_its_pool_and_is_lent_across_processes(env: dict[str, str],
                                                                tmp_path: Path) -> None:
    first = _pool(env)
    assert first["correct"] and _loaded(first["phases"])
    second = _pool(env, then="die")  # another process: the same processes, no load
    assert second["correct"] and not _loaded(second["phases"]), second["phases"]
    assert second["held"] == first["held"]
    # a borrower that dies holding the pair takes it with it: its pipes closed, they exit
    assert all(_gone(pid) for pid in second["held"])
    third = _pool(env)
    assert third["correct"] and _loaded(third["phases"])  # nothing stale was lent
    # the machine judge's own check of the task borrows what the third pool left
    verdict, output = _cli_check(env, ZOO / "task.py", ZOO / "correct.py", tmp_path)
    assert verdict["correct"] and not _loaded(verdict["phases_s"]), verdict["phases_s"]
    assert "starting the warm judge" not in output
    assert len(judges(tmp_path)) == 1


def test_weights_changed_after_the_load_are_not_kept(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """The candidate's weights file sits where candidates can write: a lender keeps a pair
    only with the bytes the reference wrote, by their digest, and closes it otherwise."""
    store = Store(tmp_path / "leases")
    pools = [JudgePool(worker_env(OPTIONS)) for _ in range(2)]
    for pool in pools:
        pool.lender = store
    try:
        assert check(ZOO / "task.py", ZOO / "correct.py", OPTIONS, pool=pools[0]).correct
        assert pools[0]._reference is not None
        reference = pools[0]._reference.worker
        pools[0].close()
        assert len(store) == 1 and reference.alive
        verdict = check(ZOO / "task.py", ZOO / "correct.py", OPTIONS, pool=pools[1])
        assert verdict.correct and not _loaded(verdict.phases_s)
        assert pools[1]._reference is not None and pools[1]._reference.worker is reference
        assert len(store) == 0  # lent: the borrower alone drives it
        (pools[1].scratch / "state_dict.pt").write_bytes(b"a candidate's own weights")
        pools[1].close()
        assert len(store) == 0 and not reference.alive
        assert "its weights no longer match their digest" in capsys.readouterr().out
    finally:
        for pool in pools:
            pool.close()
        store.close()


def test_a_check_after_a_bench_of_the_task_finds_it_loaded(env: dict[str, str],
                                                           tmp_path: Path) -> None:
    """`cudaopt bench` judges in slot processes of its own: when it ends, its slot's pair
    goes to the warm judge, and a `cudaopt check` of the task afterwards loads nothing."""
    suite, candidates = tmp_path / "suite" / "level1", tmp_path / "candidates" / "1_zoo"
    suite.mkdir(parents=True)
    shutil.copy(ZOO / "task.py", suite / "1_zoo.py")
    shutil.copytree(ZOO / "kernels", candidates / "kernels")
    shutil.copy(ZOO / "correct.py", candidates / "model_new.py")
    argv = [sys.executable, "-m", "cudaopt.cli", "bench", str(suite.parent), "--candidates",
            str(candidates.parent), "--out", str(tmp_path / "bench"), "--device", "cpu",
            "--sandbox", "none", "--trials", "2", "--time-budget", "2"]
    ran = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=900)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    line = json.loads((tmp_path / "bench" / "results.jsonl").read_text().splitlines()[0])
    assert line["correct"], line
    verdict, _ = _cli_check(env, suite / "1_zoo.py", candidates / "model_new.py", tmp_path)
    assert verdict["correct"] and not _loaded(verdict["phases_s"]), verdict["phases_s"]


@pytest.mark.gpu
def test_a_pair_lent_on_the_gpu_judges_a_cuda_candidate(env: dict[str, str]) -> None:
    """On CUDA the borrowed reference hands its outputs to a candidate process it never met
    (CUDA IPC between unrelated processes), and the baselines' breakdown travels with it."""
    folder = ROOT / "examples" / "fused_swish_cuda"
    runs = [_pool(env, task=folder / "model.py", candidate=folder / "model_new.py",
                  device="cuda") for _ in range(2)]
    assert all(run["correct"] and run["kernels_ran"] for run in runs), runs
    assert _loaded(runs[0]["phases"]), runs[0]["phases"]
    assert not _loaded(runs[1]["phases"]), (runs[1]["phases"], _judge_log(env)[-3000:])
    assert runs[0]["held"][0] in runs[1]["held"]  # its reference, whatever role it has now


@pytest.mark.slow
def test_a_check_after_an_optimize_run_finds_the_task_loaded(env: dict[str, str],
                                                             tmp_path: Path) -> None:
    """The run's own pool gives its pair away when the run ends: checking its best kernel
    afterwards, as a user does before merging the branch, loads nothing."""
    folder = tmp_path / "prefix_sum_cpu"
    folder.mkdir()
    shutil.copy(ROOT / "examples" / "prefix_sum_cpu" / "model.py", folder / "model.py")
    for argv in (["init", "-q"], ["add", "."],
                 ["-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "t"]):
        subprocess.run(["git", *argv], cwd=tmp_path, check=True)
    replay = ROOT / "examples" / "replay" / "prefix_sum_cpu.jsonl"
    ran = subprocess.run([sys.executable, "-m", "cudaopt.cli", "optimize",
                          "prefix_sum_cpu/model.py", "--model", f"replay:{replay}",
                          "--device", "cpu", "--sandbox", "none"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=900)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    [run] = (folder / ".cudaopt" / "runs").iterdir()
    verdict, _ = _cli_check(env, folder / "model.py", run / "best" / "model_new.py", tmp_path)
    assert verdict["correct"] and not _loaded(verdict["phases_s"]), verdict["phases_s"]


def test_a_pair_reniced_while_it_was_lent_is_not_borrowed(env: dict[str, str]) -> None:
    """Any process of the user can renice a pair waiting in the machine judge; so slowed,
    its baseline would flatter the next borrower's candidates. It is not lent: the next pool
    loads the task in processes of its own."""
    first = _pool(env)
    for pid in first["held"]:
        for thread in os.listdir(f"/proc/{pid}/task"):
            os.setpriority(os.PRIO_PROCESS, int(thread), 19)
    second = _pool(env)
    assert second["correct"] and _loaded(second["phases"]), second["phases"]
    assert not set(second["held"]) & set(first["held"])
    assert "process was rescheduled" in _judge_log(env)  # the judge's log says why
