"""Where a judge worker's start-up time goes, stage by stage, in fresh processes; then a
trusted worker started anew against one forked from the template.

    python benchmarks/worker_start.py [--device cuda|cpu] [--repeat 2]

Every `cudaopt check` that does not reach a warm judge server starts three workers and
waits for the slowest; this prints each stage's seconds (import torch, device
initialisation, the candidate worker's operator-guard warm-up, torch.compile's imports) so
the next change to start-up can be aimed and checked. The second part prints how long a
prewarmed reference worker takes to answer its first message, started as a new process and
forked from a long-lived pool's template (`cudaopt.judge.workers.template`).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

STAGES = r"""
import json, sys, time
marks = [("python", time.perf_counter())]
def mark(name):
    marks.append((name, time.perf_counter()))
import torch
mark("import torch")
device = torch.device(sys.argv[1])
torch.empty(1, device=device)
if device.type == "cuda":
    torch.cuda.synchronize()
mark("device init")
import cudaopt.judge.roles.candidate
mark("import judge")
from cudaopt.judge.checks.guard import OpGuard
with OpGuard(()):
    torch.empty(1)
mark("guard warm-up")
import torch._dynamo, torch._inductor.compile_fx
mark("import inductor")
print(json.dumps([(n, b - a) for (_, a), (n, b) in zip(marks, marks[1:])]))
"""


def trusted(repeat: int) -> None:
    """Seconds to a prewarmed reference worker's first answer: new, then forked."""
    import tempfile
    import time

    from cudaopt.judge.workers import template
    from cudaopt.judge.workers.adopted import Adopted
    from cudaopt.judge.workers.child import Worker, WorkerFailure

    folder = Path(tempfile.mkdtemp(prefix="worker-start-"))
    env = {"CUDAOPT_PREWARM": "compile"}

    def answered(fork: bool) -> tuple[float, bool]:
        started = time.perf_counter()
        worker = Worker("reference", folder / "w.log", env, fork=fork)
        try:
            worker.call("no such request", 300)
        except WorkerFailure:
            pass  # the answer: it is past its imports
        took = time.perf_counter() - started
        forked = isinstance(worker.proc, Adopted)
        worker.discard()
        return took, forked

    for run in range(repeat):
        print(f"new process {run + 1}: {answered(False)[0]:.2f} s", flush=True)
    answered(True)  # starts the template; this worker itself starts anew
    deadline = time.monotonic() + 300
    while not answered(True)[1]:
        if template.refusals():
            print(f"no forks: the template refused ({template.refusals()[0]})", flush=True)
            return
        assert time.monotonic() < deadline, "the template never became ready"
        time.sleep(0.5)
    for run in range(repeat):
        took, forked = answered(True)
        print(f"forked {run + 1}: {took:.3f} s{'' if forked else ' (not forked)'}", flush=True)
    template.close_all()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    for run in range(args.repeat):
        proc = subprocess.run([sys.executable, "-c", STAGES, args.device], cwd=ROOT,
                              capture_output=True, text=True, check=True)
        stages = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"run {run + 1}: " + ", ".join(f"{name} {s:.2f} s" for name, s in stages)
              + f"; total {sum(s for _, s in stages):.2f} s", flush=True)
    trusted(args.repeat)


if __name__ == "__main__":
    main()
