"""A task's baselines are compiled once: later judgements of the same task content reuse the
warm baseline process (nothing traced), or, in new processes, torch.compile's on-disk cache;
and a judgement builds and loads while another holds the device, waiting only to time."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cudaopt.judge import JudgeOptions, Status, check, worker_env
from cudaopt.judge.workers.devlock import DeviceLock
from cudaopt.judge.workers.pool import JudgePool

ZOO = Path(__file__).parent / "zoo"
TASK = ZOO / "task.py"
COMPILE = "baselines.compile:default"


def _opts(cache: Path, **kw: object) -> JudgeOptions:
    return JudgeOptions(device="cpu", time_budget_s=1.0, min_rounds=3, trials=2,
                        cache_dir=cache, **kw)


def _judge(task: Path, pool: JudgePool, opts: JudgeOptions) -> tuple[object, list[str]]:
    said: list[str] = []
    verdict = check(task, ZOO / "correct.py", opts, said.append, pool=pool)
    assert verdict.status is Status.OK and verdict.correct, verdict.error
    return verdict, said


@pytest.mark.slow
def test_one_task_is_compiled_once_per_process_tree_then_served_from_the_cache(
        tmp_path: Path) -> None:
    opts = _opts(tmp_path / "cache")
    copy = tmp_path / "elsewhere" / "model.py"  # the same task under another path
    copy.parent.mkdir()
    shutil.copyfile(TASK, copy)
    pool = JudgePool(worker_env(opts))
    try:
        first, _ = _judge(TASK, pool, opts)
        assert COMPILE in first.phases_s and first.baseline_cache.get("fxgraph_cache_miss")
        loading = {f"load.candidate.{part}"
                   for part in ("import", "import_wait", "stage", "turn", "model")}
        assert loading <= set(first.phases_s), first.phases_s  # where `load` went
        baseline = pool.references(TASK, "cpu")[1].worker
        second, said = _judge(copy, pool, opts)
        assert COMPILE not in second.phases_s and second.baseline_cache == {}
        assert any("kept warm from an earlier judgement" in line for line in said), said
        assert pool.references(copy, "cpu")[1].worker is baseline
    finally:
        pool.close()
    fresh = JudgePool(worker_env(opts))  # new processes, the same on-disk caches
    try:
        third, said = _judge(TASK, fresh, opts)
        assert third.baseline_cache.get("fxgraph_cache_hit") and \
            not third.baseline_cache.get("fxgraph_cache_miss")
        assert any("from the on-disk cache" in line for line in said), said
    finally:
        fresh.close()


@pytest.mark.slow
def test_reseeding_reloads_new_weights_in_the_same_trusted_processes(tmp_path: Path) -> None:
    opts = _opts(tmp_path / "cache")
    pool = JudgePool(worker_env(opts))
    try:
        _judge(TASK, pool, opts)
        reference, baseline = (x.worker for x in pool.references(TASK, "cpu"))
        seed = pool.init_seed
        pool.reseed()
        assert pool.init_seed != seed and pool.references(TASK, "cpu") == (None, None)
        again, _ = _judge(TASK, pool, opts)
        assert COMPILE in again.phases_s  # the new model is compiled again...
        assert again.baseline_cache.get("fxgraph_cache_hit")  # ...from the cache
        warm = pool.references(TASK, "cpu")
        assert (warm[0].worker, warm[1].worker) == (reference, baseline)
    finally:
        pool.close()


_HOLD = """import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
print("in", flush=True)
sys.stdin.readline()
"""


def test_a_build_runs_while_another_process_holds_the_device(tmp_path: Path) -> None:
    lock_path = tmp_path / "device.lock"
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(lock_path)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    build = tmp_path / "build"
    opts = _opts(tmp_path / "cache", profile=False, build_dir=build)
    pool = JudgePool(worker_env(opts), keep_warm=False)
    pool.lock = DeviceLock(lock_path)
    found: dict[str, object] = {}
    said: list[str] = []
    try:
        assert holder.stdout.readline().strip() == "in"
        judging = threading.Thread(target=lambda: found.update(
            verdict=check(TASK, ZOO / "correct.py", opts, said.append, pool=pool)))
        judging.start()
        deadline = time.monotonic() + 300
        while "candidate loaded" not in said and time.monotonic() < deadline:
            time.sleep(0.2)
        built = list(build.rglob("*.so"))
        assert built and "candidate loaded" in said, f"no build while the device was held: {said}"
        time.sleep(1.0)
        assert judging.is_alive() and "verdict" not in found  # waiting to verify
        released = time.time()
        holder.stdin.write("go\n")
        holder.stdin.flush()
        judging.join(timeout=300)
    finally:
        holder.kill()
        holder.wait()
        pool.close()
    verdict = found["verdict"]
    assert verdict.status is Status.OK and verdict.correct
    assert max(p.stat().st_mtime for p in built) < released
    assert verdict.phases_s["lock"] >= 1.0  # it waited for the device only after building
