"""Throughput of the reward service: evaluations per GPU-minute and the latency of a step.

    python benchmarks/env_throughput.py                       # CUDA: 1 GPU, then 2
    python benchmarks/env_throughput.py --device cpu --batch 8 --slots 1

Starts `cudaopt env serve` as its own process (as a trainer would meet it) for each slot
count, then:

- `/verify` with batches of `--batch` candidates cycling over small single-kernel tasks: the
  shipped examples and KernelBench-format tasks (the `benchmarks/kernelbench` tasks at small
  sizes). A warm-up batch judges each distinct candidate once (cold builds, torch.compile
  baselines traced); the measured batches then hit warm builds, as an RL run does after its
  first step. Evaluations per GPU-minute = candidates judged / (wall minutes x slots).
  Where the time goes, summed over candidates: build (ahead of time on the CPU pool, plus
  what the slot rebuilt), verify, timing (profile), and queue (waiting for a slot); the
  parts of the phases that hold the device, per evaluation. `--save` keeps every answer.
- `/step` latency for tools that never judge (`read`, `write`): p50 and p99 over `--steps`;
  a step that reaches the step limit waits for the run's end and counts apart (`end`).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cudaopt.env import EnvClient  # noqa: E402

KERNELBENCH = ROOT / "benchmarks" / "kernelbench"
#: (task folder, size lines rewritten to small-task sizes)
CUDA_SUITE = [
    (ROOT / "examples" / "fused_swish_cuda", {}),
    (ROOT / "examples" / "softplus_inline", {}),
    (KERNELBENCH / "relu", {"batch_size": 256, "dim": 16384}),
    (KERNELBENCH / "matmul", {"n": 1024}),
    (KERNELBENCH / "sum_reduce", {"batch_size": 16, "dim1": 256, "dim2": 255}),
]
#: The judgement's phases (the verdict's `phases_s`); build also counts the build ahead.
PHASES = ("lock", "build", "load", "verify", "baselines", "timing", "warm", "streams")
#: The phases that hold the device: their parts are printed too (mean ms per evaluation).
DEVICE_PHASES = ("verify", "timing", "warm", "streams")
CPU_SUITE = [
    (ROOT / "examples" / "fused_swish_cpu", {}),
    (ROOT / "examples" / "fused_swish_cpu", {"batch_size": 32}),
    (ROOT / "examples" / "fused_swish_cpu", {"batch_size": 64, "features": 512}),
]


def item(folder: Path, sizes: dict[str, int]) -> dict:
    """One /verify item: the task (sizes rewritten) and its candidate, as text."""
    task = (folder / "model.py").read_text()
    for name, value in sizes.items():
        task = re.sub(rf"^{name} = .*$", f"{name} = {value}", task, flags=re.M)
    kernels = folder / "kernels"
    tag = "_".join(f"{k}{v}" for k, v in sizes.items())
    return {"task": task, "task_name": f"{folder.name}{'_' + tag if tag else ''}.py",
            "model_new": (folder / "model_new.py").read_text(),
            "kernels": {p.name: p.read_text() for p in sorted(kernels.iterdir())}
            if kernels.is_dir() else {}}


class Served:
    """`cudaopt env serve` in its own process, on a free port."""

    def __init__(self, root: Path, device: str, slots: int, sandbox: str):
        token = root / "token"
        token.write_text("bench-" + "0" * 32 + "\n")
        spread = ["--gpus", ",".join(map(str, range(slots)))] if device == "cuda" else [
            "--workers", str(slots)]
        self.log = root / "serve.log"
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "cudaopt.cli", "env", "serve", "--port", "0",
                 "--device", device, "--sandbox", sandbox, "--root", str(root / "state"),
                 "--token-file", str(token), "--queue-per-slot", "256", *spread],
                stdout=log, stderr=log, start_new_session=True)
        self.client = EnvClient(self._url(), token_file=token, busy_wait_s=3600)

    def _url(self) -> str:
        for _ in range(1200):
            found = re.search(r"listening on (http://\S+)", self.log.read_text())
            if found:
                return found.group(1)
            if self.proc.poll() is not None:
                sys.exit("env serve did not start:\n" + self.log.read_text()[-3000:])
            time.sleep(0.1)
        sys.exit("env serve did not start within 2 minutes")

    def close(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def measure_verify(client: EnvClient, suite: list[dict], batch: int, batches: int,
                   slots: int, save: Path | None) -> dict:
    progress(f"warm-up: {len(suite)} distinct candidates (cold builds, baselines)")
    t0 = time.perf_counter()
    answers = client.verify(suite)
    warmup_s = time.perf_counter() - t0
    check_answers(answers)
    progress(f"{slots} slot(s): warm-up of {len(suite)} candidates took {warmup_s:.1f} s")
    for item_, answer in zip(suite, answers, strict=True):
        progress(f"warm-up {item_['task_name']}: {warmup_line(answer)}")
    totals = dict(evals=0, wall_s=0.0, queue=0.0, infra=0, warmup_s=warmup_s,
                  parts={}, **{p: 0.0 for p in PHASES})
    started = time.perf_counter()
    for number in range(batches):
        items = [suite[i % len(suite)] for i in range(batch)]
        t0 = time.perf_counter()
        results = client.verify(items)
        check_answers(results)
        totals["wall_s"] += time.perf_counter() - t0
        if save:  # off the clock
            with save.open("a") as out:
                out.writelines(json.dumps({"slots": slots, **r}) + "\n" for r in results)
        for r in results:
            v = r["verdict"] or {}
            totals["evals"] += 1
            totals["infra"] += r["infra_error"] is not None
            totals["build"] += r.get("build_ahead_s", 0.0)
            for name, spent in (v.get("phases_s") or {}).items():
                if name in PHASES:
                    totals[name] += spent
                elif name.split(".")[0] in DEVICE_PHASES:
                    totals["parts"][name] = totals["parts"].get(name, 0.0) + spent
            totals["queue"] += r.get("queue_s", 0.0)
        done = number + 1
        eta = (time.perf_counter() - started) / done * (batches - done)
        progress(f"{slots} slot(s): batch {done}/{batches}, ETA {eta:.0f} s")
    totals["per_slot_min"] = totals["evals"] / (totals["wall_s"] / 60) / slots
    return totals


def warmup_line(answer: dict) -> str:
    """Where one warm-up judgement's time went: its build ahead, its wait for a lane, and its
    phases with their largest parts (seconds), so a slow warm-up names its cause."""
    phases = (answer.get("verdict") or {}).get("phases_s") or {}
    top = [name for name in PHASES if name in phases]
    parts = sorted(((n, s) for n, s in phases.items() if "." in n), key=lambda kv: -kv[1])[:6]
    return ", ".join([f"build ahead {answer.get('build_ahead_s', 0.0):.1f}",
                      f"queue {answer.get('queue_s', 0.0):.1f}",
                      *(f"{n} {phases[n]:.1f}" for n in top),
                      *(f"{n} {s:.1f}" for n, s in parts)])


def check_answers(results: list[dict]) -> None:
    for r in results:
        if r["infra_error"]:
            progress(f"infrastructure error: {r['infra_error'][:200]}")
        elif not r["correct"]:
            progress(f"a candidate was judged incorrect ({r['verdict']['status']})")


def measure_steps(client: EnvClient, task: str, steps: int) -> dict[str, list[float]]:
    """Latency per tool; a step that ends its episode (the step limit) also waits for the
    run's final check and teardown, so it counts apart, as `end`."""
    episode = client.reset(task)["observation"]["episode_id"]
    times: dict[str, list[float]] = {"read": [], "write": [], "end": []}
    for n in range(steps):
        tool, args = (("read", {"path": "model.py"}) if n % 2 else
                      ("write", {"path": "notes.txt", "content": f"step {n}\n" * 50}))
        t0 = time.perf_counter()
        reply = client.step(episode, tool, args)
        times["end" if reply["done"] else tool].append((time.perf_counter() - t0) * 1000)
        if reply["done"]:  # the step limit: start another episode
            episode = client.reset(task)["observation"]["episode_id"]
    return times


def progress(text: str) -> None:
    print(f"  .. {text}", file=sys.stderr, flush=True)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--slots", default="1,2", help="slot counts to measure (GPUs or "
                        "CPU workers)")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--batches", type=int, default=1, help="measured batches per run")
    parser.add_argument("--steps", type=int, default=200, help="/step calls for latency")
    parser.add_argument("--save", type=Path, default=None, help="append each measured "
                        "answer (verdict included) to this JSON-lines file")
    parser.add_argument("--sandbox", default=None, help="default: auto when bwrap is "
                        "installed, else none")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwind: the server is stopped
    sandbox = args.sandbox or ("auto" if shutil.which("bwrap") else "none")
    suite = [item(folder, sizes) for folder, sizes in
             (CUDA_SUITE if args.device == "cuda" else CPU_SUITE)]
    rows, steps = [], None
    for slots in [int(s) for s in args.slots.split(",")]:
        root = Path(tempfile.mkdtemp(prefix="cudaopt-envbench-"))
        served = Served(root, args.device, slots, sandbox)
        try:
            rows.append((slots, measure_verify(served.client, suite, args.batch,
                                               args.batches, slots, args.save)))
            t = rows[-1][1]  # as it finishes: a run cut short by a time limit still reports it
            progress(f"{slots} slot(s): {t['evals']} evals in {t['wall_s']:.1f} s, "
                     f"{t['per_slot_min']:.1f} per slot-minute; seconds summed: " + ", ".join(
                         f"{p} {t[p]:.1f}" for p in (*PHASES, "queue")))
            progress(f"{slots} slot(s): device phases' parts, mean ms per evaluation: " + ", ".join(
                f"{name} {spent / max(t['evals'], 1) * 1e3:.0f}"
                for name, spent in sorted(t["parts"].items(), key=lambda kv: -kv[1])[:14]))
            if steps is None:
                steps = measure_steps(served.client, suite[0]["task"], args.steps)
        finally:
            served.close()
            shutil.rmtree(root, ignore_errors=True)
    report(rows, steps or {}, args, sandbox)


def report(rows: list[tuple[int, dict]], steps: dict[str, list[float]],
           args: argparse.Namespace, sandbox: str) -> None:
    unit = "GPU" if args.device == "cuda" else "slot"
    print(f"\n/verify, batches of {args.batch} ({args.device}, sandbox {sandbox})")
    print(f"{'slots':>5} {'warm-up s':>9} {'evals':>6} {'wall s':>8} "
          f"{'evals/' + unit + '-min':>15} {'infra':>5}")
    for slots, t in rows:
        print(f"{slots:>5} {t['warmup_s']:>9.1f} {t['evals']:>6} {t['wall_s']:>8.1f} "
              f"{t['per_slot_min']:>15.1f} {t['infra']:>5}")
    print("\nwhere the time goes: seconds summed over the measured candidates")
    print(f"{'slots':>5}" + "".join(f"{p[:6]:>8}" for p in (*PHASES, "queue")))
    for slots, t in rows:
        print(f"{slots:>5}" + "".join(f"{t[p]:>8.1f}" for p in (*PHASES, "queue")))
    print("\n/step latency for tools that never judge (ms); `end`: the step that reached the "
          "step limit,\nwhich waits for the run's final check and teardown")
    print(f"{'tool':>6} {'calls':>6} {'p50':>8} {'p99':>8} {'mean':>8}")
    for tool, values in steps.items():
        if values:
            print(f"{tool:>6} {len(values):>6} {percentile(values, 0.5):>8.1f} "
                  f"{percentile(values, 0.99):>8.1f} {statistics.mean(values):>8.1f}")


if __name__ == "__main__":
    main()
