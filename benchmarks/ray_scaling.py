"""Throughput of the Ray executor on a simulated cluster: CPU nodes started on this machine,
one declared GPU each, judging the project's CPU suite with 1, 2 and 4 slots; then the
driver's overhead per task (empty jobs through Ray vs through local slot processes).

    python benchmarks/ray_scaling.py [--workers 1,2,4] [--samples 2] [--empty 100]

Builds happen once, in a warm-up pass not counted (they are content-keyed and reused), so
the figures are judging throughput with warm slots, as in a bench with many samples per
task. On a machine with fewer cores than slots, the slots share the cores: read the
scaling against the core count printed first.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import ray  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

from cudaopt.executor import Job, LocalExecutor, Sources  # noqa: E402
from cudaopt.executor.cluster import RayExecutor  # noqa: E402
from cudaopt.judge import JudgeOptions  # noqa: E402

ZOO = ROOT / "tests" / "judge" / "zoo"
SWISH = ROOT / "examples" / "fused_swish_cpu"


def suite(samples: int) -> list[Job]:
    """Each candidate of the CPU suite, `samples` times (as a bench with N samples)."""
    options = JudgeOptions(device="cpu", trials=2, time_budget_s=2.0, min_rounds=3)
    pairs = [(ZOO / "task.py", ZOO / f"{name}.py")
             for name in ("correct", "wrong_values", "wrong_shape", "torch_in_forward")]
    pairs.append((SWISH / "model.py", SWISH / "model_new.py"))
    return [Job(f"{cand.parent.name}/{cand.stem}#{i}", "judge",
                Sources.from_files(task, cand), options)
            for i in range(samples) for task, cand in pairs]


def run_all(executor, jobs: list[Job]) -> float:
    started = time.perf_counter()
    results = [f.result() for f in [executor.submit(job) for job in jobs]]
    bad = [r.infra_error for r in results if r.infra_error]
    if bad:
        raise SystemExit(f"infrastructure errors: {bad[:3]}")
    return time.perf_counter() - started


def empty_jobs(n: int, marks: Path) -> list[Job]:
    sources = Sources("t.py", "class Model: pass\n")
    return [Job(f"e{i}", "nap", sources, JudgeOptions(), {"marks": str(marks), "s": 0.0})
            for i in range(n)]


def overhead(executor, n: int, marks: Path) -> tuple[float, float]:
    """Per task: one at a time (latency), and all at once (pipelined), in ms."""
    one = time.perf_counter()
    for job in empty_jobs(n, marks):
        executor.submit(job).result()
    one = (time.perf_counter() - one) / n * 1e3
    return one, run_all(executor, empty_jobs(n, marks)) / n * 1e3


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--samples", type=int, default=2)
    parser.add_argument("--empty", type=int, default=100)
    args = parser.parse_args()
    counts = [int(w) for w in args.workers.split(",")]
    print(f"cores: {os.cpu_count()}, load: {os.getloadavg()[0]:.1f}, nodes: {max(counts)}")
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "num_gpus": 0})
    root, marks = Path(tempfile.mkdtemp()), Path(tempfile.mkdtemp())
    plugins = ("tests.executor.ray_plugin",)
    try:
        for _ in range(max(counts)):
            cluster.add_node(num_cpus=2, num_gpus=1)  # one for the slot, one for builds
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, log_to_driver=False,
                 runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}})
        jobs = suite(args.samples)
        with RayExecutor(device="cpu", root=root) as ex:
            print(f"warm-up (builds) {run_all(ex, suite(1)):.1f} s")
        print(f"\n{'slots':>5} {'start s':>8} {'jobs':>5} {'wall s':>7} {'jobs/min':>9} "
              f"{'vs 1':>6}")
        base = None
        for count in counts:
            t0 = time.perf_counter()
            with RayExecutor(device="cpu", slots=count, root=root) as ex:
                start_s = time.perf_counter() - t0
                wall = run_all(ex, jobs)
            rate = len(jobs) / wall * 60
            base = base or rate
            print(f"{count:>5} {start_s:>8.1f} {len(jobs):>5} {wall:>7.1f} {rate:>9.1f} "
                  f"{rate / base:>5.2f}x")
        print(f"\ndriver overhead per task ({args.empty} empty jobs, 1 slot), ms:")
        print(f"{'executor':>10} {'one by one':>11} {'pipelined':>10}")
        for name, make in (("ray", lambda: RayExecutor(device="cpu", slots=1, plugins=plugins)),
                           ("local", lambda: LocalExecutor("cpu", plugins=plugins))):
            with make() as ex:
                one, pipelined = overhead(ex, args.empty, marks)
            print(f"{name:>10} {one:>11.1f} {pipelined:>10.1f}")
    finally:
        ray.shutdown()
        cluster.shutdown()


if __name__ == "__main__":
    main()
