"""Does a process launch slower once torch.profiler has run in it?

    python benchmarks/profiled_launch.py [--device cuda] [--calls 2000] [--repeat 5]
        [--torch-profiler]

A warm judge keeps a task's baseline process between judgements, and the back-to-back
phase profiles that process after its timed calls: if a profiled process launched slower
ever after, the eager and torch.compile baselines of every later judgement would be slowed,
and a candidate (always a new process) credited for it. Here, in one process: the median
time per call of a launch-bound step (a small tensor's add, `--calls` back to back,
synchronised once), before any profiler, then after each of `--repeat` profiler sessions
like the judge's (`burst.judge_profiler`: CPU and CUDA activities; `--torch-profiler`:
torch.profiler's wrapper of it, whose start imports inductor and dynamo into the process).
Each figure is printed as it is taken, with whether inductor has been imported.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

from cudaopt.judge.timing.burst import judge_profiler


def per_call_us(x: torch.Tensor, calls: int, sync: object) -> float:
    samples = []
    for _ in range(7):
        sync()
        started = time.perf_counter()
        for _ in range(calls):
            x.add_(1.0)
        sync()
        samples.append((time.perf_counter() - started) / calls * 1e6)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--torch-profiler", action="store_true",
                        help="torch.profiler.profile, not the judge's profiler")
    args = parser.parse_args()
    device = torch.device(args.device)
    cuda = device.type == "cuda"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    activities = [ProfilerActivity.CPU, *([ProfilerActivity.CUDA] if cuda else [])]
    x = torch.zeros(256, device=device)
    per_call_us(x, args.calls, sync)  # first-call costs
    before = per_call_us(x, args.calls, sync)
    print(f"{args.device}: {before:.2f} us a call before any profiler", flush=True)
    for session in range(1, args.repeat + 1):
        with (profile(activities=activities) if args.torch_profiler else judge_profiler(cuda)):
            for _ in range(50):
                x.add_(1.0)
            sync()
        after = per_call_us(x, args.calls, sync)
        print(f"after profiler session {session}: {after:.2f} us a call "
              f"({after / before:.3f}x before; inductor imported: "
              f"{'torch._inductor' in sys.modules})", flush=True)


if __name__ == "__main__":
    main()
