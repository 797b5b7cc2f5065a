"""What committing to a call's outputs costs (see cudaopt/judge/workers/digest.py), beside
the copy of them the judge already makes, per output size.

    python benchmarks/digest_cost.py [--device cuda|cpu] [--sizes-mib 1 64 1024 6144]

Prints one line per size as soon as it is measured: the median of a few digests and of a
few copies, in ms, and the digest's cost per GiB.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time
from collections.abc import Callable

import torch

from cudaopt.judge.workers.digest import digest


def _median_ms(fn: Callable[[], object], device: torch.device, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        if device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        if device.type == "cuda":
            torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--sizes-mib", type=int, nargs="+", default=[1, 64, 1024, 6144])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    device = torch.device(args.device)
    print(f"{'MiB':>6} {'digest ms':>10} {'copy ms':>9} {'ms/GiB':>8}", flush=True)
    for mib in args.sizes_mib:
        leaves = {"out": torch.randn(mib << 18, device=device)}
        commit = functools.partial(digest, {"tensor": "out"}, leaves)
        commit()  # first-call costs
        cost = _median_ms(commit, device, args.repeat)
        copy = _median_ms(leaves["out"].clone, device, args.repeat)
        print(f"{mib:>6} {cost:>10.2f} {copy:>9.2f} {cost / mib * 1024:>8.1f}", flush=True)
        leaves.clear()


if __name__ == "__main__":
    main()
