"""The Ray executor on a real local Ray cluster: a head node and a second node started
here, each declaring one GPU on this CPU machine. Judgements match the local executor's, a
node killed mid-batch costs only retries, and the driver's result stream is all a resume
needs."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import as_completed
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from cudaopt.executor import Job, JobResult, LocalExecutor, Sources
from cudaopt.judge import JudgeOptions, kernel_store
from cudaopt.judge.building import kernels as kernel_build
from cudaopt.judge.building import shared
from cudaopt.judge.building.kernels import build_kernels
from tests.conftest import ROOT

ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'cudaopt[ray]'")

from ray.cluster_utils import Cluster  # noqa: E402

from cudaopt.executor.cluster import RayExecutor  # noqa: E402
from cudaopt.executor.ray_node import _unpack, build  # noqa: E402

ZOO = ROOT / "tests" / "judge" / "zoo"
IDENTITY = "import torch.nn as nn\n\nclass ModelNew(nn.Module):\n" \
           "    def __init__(self, features, scale):\n        super().__init__()\n" \
           "    def forward(self, x):\n        return x\n"
FAST_DEATH = {"health_check_period_ms": 1000, "health_check_failure_threshold": 3}


@pytest.fixture(scope="module")
def cluster():
    """Two nodes of one slot each ("GPU" declared, so slots land one per node)."""
    nodes = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 2, "num_gpus": 1, "_system_config": FAST_DEATH})
    try:
        second = nodes.add_node(num_cpus=2, num_gpus=1)
        nodes.wait_for_nodes()
        ray.init(address=nodes.address, log_to_driver=False,
                 runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}})
        yield nodes, second
    finally:
        ray.shutdown()
        nodes.shutdown()


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One content-keyed folder for the module: a candidate is built once."""
    return tmp_path_factory.mktemp("ray-root")


def _suite() -> list[Job]:
    """Correct (with built kernels), a rule violation, and wrong values (both unbuilt)."""
    task = ZOO / "task.py"
    options = JudgeOptions(device="cpu", trials=2, profile=False, seed=1)
    torch_only = Sources.from_files(task, ZOO / "torch_in_forward.py")
    return [Job("correct", "judge", Sources.from_files(task, ZOO / "correct.py"), options),
            Job("torch", "judge", Sources(torch_only.task_name, torch_only.task,
                                          torch_only.model_new), options),
            Job("identity", "judge", Sources("task.py", task.read_text(), IDENTITY), options)]


def _fields(result: JobResult) -> dict:
    assert result.infra_error is None, result.infra_error
    return {k: result.verdict[k] for k in ("compiled", "correct", "violations", "reward")}


def test_judgements_match_the_local_executor(cluster, root: Path) -> None:
    jobs = _suite()
    with RayExecutor(device="cpu", root=root) as ex:
        assert len(ex.slots) == 2 and len({n["node_id"] for n in ex.nodes}) == 2
        assert all("torch" in line for line in ex.describe())
        futures = {job.id: ex.submit(job) for job in jobs}
        remote = {job_id: future.result(timeout=900) for job_id, future in futures.items()}
    with LocalExecutor("cpu", root=root) as local:
        here = {j.id: local.submit(j).result(timeout=900) for j in jobs}
    assert {k: _fields(r) for k, r in remote.items()} == {k: _fields(r) for k, r in here.items()}
    assert _fields(remote["correct"])["reward"] == 1 and _fields(remote["correct"])["compiled"]
    assert _fields(remote["torch"])["violations"] and _fields(remote["torch"])["reward"] == -1
    assert not _fields(remote["identity"])["correct"]
    for result in remote.values():  # each result says where it ran
        assert "#" in result.slot and result.extra["node"] in result.slot
        assert result.device_name and result.torch_version


def test_a_build_made_on_another_node_is_used_as_it_is(cluster, tmp_path: Path) -> None:
    # a folder and a store of its own: a build copied from the user's store (which an
    # earlier test may have filled) brings its module but not ninja's objects
    job = _suite()[0]
    job = replace(job, options=replace(job.options, cache_dir=tmp_path / "cache"))
    # the entry object this host keeps for its own builds stays here: a shipped build
    # compiles and carries its own (this one would not even link)
    entry = shared.digest(None, kernel_build._flags(False), kernel_build.DATA_DIR)
    planted = shared.entry_path(kernel_store(job.options), entry)
    planted.parent.mkdir(parents=True)
    planted.write_bytes(b"not an object file")
    root = tmp_path / "root"
    built = build(job, str(root), "cpu", None)
    assert built is not None and built["tar"]
    out = Path(built["dir"])
    assert (out / shared.ENTRY).is_file()
    shutil.rmtree(out)  # as on a node that never saw this candidate
    _unpack(ray.put(built), job, root, node_id="another node")
    kernels = job.sources.materialize(root)[1].parent / "kernels"
    again = build_kernels(kernels, out, 600)
    assert again.ok and again.rebuilt == [], again.log


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs nodes without a CUDA device")
def test_nodes_that_cannot_judge_cuda_are_found_at_start_up(cluster) -> None:
    with pytest.raises(RuntimeError, match="left out: .*no CUDA device visible to torch"):
        RayExecutor(device="cuda", startup_timeout_s=120)
    _wait(lambda: ray.available_resources().get("GPU") == 2)  # its actors were released


def _naps(marks: Path, n: int, seconds: float) -> list[Job]:
    sources = Sources("t.py", "class Model: pass\n")
    return [Job(f"nap{i}", "nap", sources, JudgeOptions(), {"marks": str(marks), "s": seconds})
            for i in range(n)]


def _drive(ex: RayExecutor, jobs: list[Job], out: Path, stop_after: int | None = None) -> list:
    """What bench's driver does: skip what `out` already holds, write each result as it
    comes back (this process alone writes), and stop early when asked (a Ctrl-C)."""
    done = {json.loads(line)["id"] for line in out.read_text().splitlines()} \
        if out.exists() else set()
    todo = [job for job in jobs if job.id not in done]
    futures = [ex.submit(job) for job in todo]
    with out.open("a") as sink:
        for count, future in enumerate(as_completed(futures), 1):
            result = future.result()
            if result.infra_error is None:
                sink.write(json.dumps(result.to_json()) + "\n")
                sink.flush()
            if count == stop_after:
                ex.close()
    return [job.id for job in todo]


def test_a_stopped_batch_resumes_without_redoing_finished_jobs(cluster, tmp_path: Path) -> None:
    marks, out = tmp_path / "marks", tmp_path / "results.jsonl"
    marks.mkdir()
    jobs = _naps(marks, 6, 1.0)
    with RayExecutor(device="cpu", plugins=("tests.executor.ray_plugin",)) as ex:
        assert _drive(ex, jobs, out, stop_after=2) == [j.id for j in jobs]
    finished = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    assert len(finished) >= 2
    _wait(lambda: ray.available_resources().get("GPU") == 2)  # the actors were released
    with RayExecutor(device="cpu", plugins=("tests.executor.ray_plugin",)) as ex:
        resubmitted = _drive(ex, jobs, out)
    assert sorted(resubmitted) == sorted(set(j.id for j in jobs) - set(finished))
    lines = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    assert sorted(lines) == sorted(j.id for j in jobs)
    ran = [m.name.split("@")[0] for m in marks.iterdir()]
    assert all(ran.count(job_id) == 1 for job_id in finished)


def test_a_hung_job_is_killed_retried_once_then_an_infrastructure_error(
        cluster, tmp_path: Path) -> None:
    (job,) = _naps(tmp_path, 1, 600.0)
    with RayExecutor(device="cpu", plugins=("tests.executor.ray_plugin",), job_timeout_s=3,
                     max_attempts=2) as ex:
        result = ex.submit(job).result(timeout=300)
    assert result.verdict is None and result.attempts == 2
    assert "gave no answer within 3 s" in result.infra_error
    assert len(result.extra["infra_errors"]) == 2
    _wait(lambda: ray.available_resources().get("GPU") == 2)


def test_ctrl_c_on_the_driver_keeps_finished_work_and_releases_the_actors(
        cluster, tmp_path: Path) -> None:
    nodes, _ = cluster
    out, marks = tmp_path / "results.jsonl", tmp_path / "marks"
    marks.mkdir()
    env = {**os.environ, "RAY_ADDRESS": nodes.address}  # Ray's own way to name the cluster
    driver = subprocess.Popen([sys.executable, "-m", "tests.executor.ray_driver", str(out),
                               str(marks), "200"], cwd=ROOT, env=env)
    try:
        _wait(lambda: out.exists() and len(out.read_text().splitlines()) >= 2, 180)
        driver.send_signal(signal.SIGINT)
        assert driver.wait(timeout=60) != 0
    finally:
        driver.kill()
    kept = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    assert 2 <= len(kept) < 200 and len(set(kept)) == len(kept)
    _wait(lambda: ray.available_resources().get("GPU") == 2)


def test_a_node_killed_mid_batch_costs_only_retries(cluster, tmp_path: Path) -> None:
    nodes, second = cluster
    marks = tmp_path / "marks"
    marks.mkdir()
    jobs = _naps(marks, 4, 4.0)
    with RayExecutor(device="cpu", plugins=("tests.executor.ray_plugin",),
                     startup_timeout_s=60) as ex:
        futures = [ex.submit(job) for job in jobs]
        _wait(lambda: any(m.name.split("@")[1] == second.node_id for m in marks.iterdir()))
        nodes.remove_node(second)
        results = [f.result(timeout=600) for f in futures]
    assert all(r.infra_error is None for r in results), [r.infra_error for r in results]
    retried = [r for r in results if r.attempts > 1]
    assert retried and all("lost" in r.extra["infra_errors"][0] for r in retried)
    assert all(r.extra["ran_on"] != second.node_id for r in retried)


def _wait(condition, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)
