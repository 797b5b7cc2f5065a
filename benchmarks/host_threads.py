"""The judge's own host-side math on a busy host, with torch's threads and with one.

    python benchmarks/host_threads.py [--device cuda] [--busy 0 8 16] [--repeat 3]

A reference worker on a GPU checks a candidate's outputs on the host: the signal check's
samples (65 536 values per output leaf, a row per trial) go through a few hundred small
float64 operators. With torch's default intra-op threads (one per core) each of those is
a parallel region whose team waits for its slowest member, and on a host busy with other
judgements' starts and compiles that member is often descheduled. Here, in one process on
`--device`: five trials of a 4096 x 4096 matmul's output recorded as the judge records
them, then `Tracker.findings` timed with torch's threads and with one (`host_math`), beside
`--busy` processes that spin. Each figure is printed as it is taken; the spinning
processes stop with the script, also when its time runs out.
"""

from __future__ import annotations

import argparse
import signal
import statistics
import subprocess
import sys
import time

import torch

from cudaopt.judge.building.loading import host_math
from cudaopt.judge.checks.tracker import Tracker


def tracker(device: str) -> Tracker:
    """A tracker holding five trials (three fresh draws, two others) and the noise."""
    found = Tracker()
    found.reset(123)
    weights = torch.randn(4096, 4096, device=device)
    for trial in range(5):
        reference = torch.randn(4096, 4096, device=device) @ weights
        candidate = reference + 1e-6 * torch.randn_like(reference)
        found.record([reference], [candidate], trial < 3)
        if trial == 0:
            found.measure_noise([reference + 1e-7 * torch.randn_like(reference)])
    return found


def findings_s(found: Tracker, one_thread: bool, repeat: int) -> float:
    spent = []
    for _ in range(repeat):
        with host_math(one_thread):
            started = time.perf_counter()
            found.findings(1e-2, True)
            spent.append(time.perf_counter() - started)
    return statistics.median(spent)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--busy", type=int, nargs="+", default=[0, 8, 16])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwind: stop the spinners
    found = tracker(args.device)
    print(f"{args.device}: torch's threads {torch.get_num_threads()}; median of "
          f"{args.repeat} signal checks", flush=True)
    for busy in args.busy:
        spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                    for _ in range(busy)]
        try:
            time.sleep(0.5 if busy else 0)
            default = findings_s(found, False, args.repeat)
            print(f"{busy:3d} busy: torch's threads {default:.3f} s", flush=True)
            alone = findings_s(found, True, args.repeat)
            print(f"{busy:3d} busy: one thread      {alone:.3f} s", flush=True)
        finally:
            for spinner in spinners:
                spinner.kill()
                spinner.wait()


if __name__ == "__main__":
    main()
