"""A whole `cudaopt check` on KernelBench level-1-sized tasks, cold and warm.

    python benchmarks/kernelbench_check.py [--tasks relu matmul sum_reduce] [--runs 2]

The tasks in `benchmarks/kernelbench/` have level-1 input sizes (gigabytes per call) and a
correct candidate each, CUDA-Agent-style (`kernels/`) or KernelBench-style (`load_inline`).
Each task is copied into a fresh folder with a fresh cache, so the first run pays for
everything (worker start, kernel build, torch.compile of the baseline); later runs reuse the
build folder and the compile caches, as a user re-checking a candidate does. Printed: wall
time of the command, the judge's build / verify / profile split, and the rest ("start":
workers, task load, baseline compile not hidden behind the build); each run's `--trace`
timeline comes first.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from pathlib import Path

from timed_check import timed_check

ROOT = Path(__file__).resolve().parent.parent
TASKS = ROOT / "benchmarks" / "kernelbench"


def run_check(workspace: Path, env: dict[str, str]) -> dict[str, object]:
    result, proc = timed_check(workspace, "cuda", env, "--trace")
    print(proc.stderr, end="")  # the --trace timeline
    if proc.returncode != 0:
        print(proc.stdout[-3000:])
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", nargs="+", default=sorted(p.name for p in TASKS.iterdir()))
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="cudaopt-kb-") as tmp:
        for name in args.tasks:
            workspace = Path(tmp) / name
            shutil.copytree(TASKS / name, workspace)
            env = {**os.environ, "XDG_CACHE_HOME": str(Path(tmp) / f"cache-{name}"),
                   "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
            for i in range(args.runs):
                result = run_check(workspace, env)
                rows.append((name, "cold" if i == 0 else f"warm {i}", result))
                _print_row(*rows[-1])
    print()
    print(f"{'task':<12}{'run':<8}{'status':<10}{'wall s':>8}{'start s':>9}{'build s':>9}"
          f"{'verify s':>10}{'profile s':>11}{'vs eager':>10}{'vs compile':>12}")
    for row in rows:
        _print_row(*row)


def _print_row(name: str, run: str, r: dict[str, object]) -> None:
    rest = r["wall_s"] - r["build_s"] - r["verify_s"] - r["profile_s"]
    print(f"{name:<12}{run:<8}{r['status']:<10}{r['wall_s']:>8.2f}{rest:>9.2f}{r['build_s']:>9.2f}"
          f"{r['verify_s']:>10.2f}{r['profile_s']:>11.2f}{r['vs_eager']:>9.2f}x"
          f"{r['vs_compile']:>11.2f}x", flush=True)


if __name__ == "__main__":
    main()
