"""What stopping the candidate around one baseline's timed calls costs the judge.

    python benchmarks/hold_cost.py [--device cuda] [--holds 200] [--children 2]

Starts a process that imports torch, makes a CUDA context and an output when `--device
cuda`, starts `--children` idle child processes and waits on its stdin, as a candidate's
worker waits for its next command; then holds it `--holds` times the way the judge does
around a baseline's calls (`quiet.stopped`: find its processes in /proc, stop them, wait
until each has stopped; continue them after), and asks it for one more CUDA step. Prints
each hundred holds' median and 90th percentile in milliseconds as it has them, then the
whole run's.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cudaopt.judge.workers.quiet import stopped  # noqa: E402

WORKER = """
import subprocess, sys, torch
if sys.argv[1] == "cuda":
    out = torch.randn(1 << 20, device="cuda"); torch.cuda.synchronize()
kids = [subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                         stdin=subprocess.PIPE) for _ in range(int(sys.argv[2]))]
print("ready", flush=True)
for line in sys.stdin:
    if sys.argv[1] == "cuda":
        out += 1; torch.cuda.synchronize()
    print("answered", flush=True)
"""


def _holds_ms(pid: int, holds: int) -> list[float]:
    took_ms = []
    for i in range(holds):
        started = time.perf_counter()
        with stopped([pid]) as held:
            pass
        took_ms.append((time.perf_counter() - started) * 1e3)
        if (i + 1) % 100 == 0:
            last = took_ms[-100:]
            print(f"holds {i - 98}-{i + 1}: median {statistics.median(last):.2f} ms, p90 "
                  f"{statistics.quantiles(last, n=10)[-1]:.2f} ms ({len(held)} processes)",
                  flush=True)
    return took_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--holds", type=int, default=200)
    parser.add_argument("--children", type=int, default=0)
    args = parser.parse_args()
    worker = subprocess.Popen([sys.executable, "-c", WORKER, args.device, str(args.children)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert worker.stdout is not None
        if worker.stdout.readline().strip() != "ready":
            raise SystemExit(f"the held process did not start on {args.device} (its error "
                             "is above)")
        took_ms = _holds_ms(worker.pid, args.holds)
        assert worker.stdin is not None
        worker.stdin.write("go\n")
        worker.stdin.flush()
        print(f"{args.device}: {len(took_ms)} holds, median {statistics.median(took_ms):.2f} "
              f"ms, max {max(took_ms):.2f} ms; the worker after them: "
              f"{worker.stdout.readline().strip() or 'no answer'}")
    finally:
        worker.kill()
        worker.wait()


if __name__ == "__main__":
    main()
