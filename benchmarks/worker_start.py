"""Where a judge worker's start-up time goes, stage by stage, in fresh processes.

    python benchmarks/worker_start.py [--device cuda|cpu] [--repeat 2]

Every `cudaopt check` that does not reach a warm judge server starts three workers and
waits for the slowest; this prints each stage's seconds (import torch, device
initialisation, the candidate worker's operator-guard warm-up, torch.compile's imports) so
the next change to start-up can be aimed and checked.
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


if __name__ == "__main__":
    main()
