"""Work left on other streams, judged: racy kernels refused with the rule named, honest
multi-stream kernels passed, and which check decided (CUDA only).

    python benchmarks/streams_check.py [--profile]

Judges the stream candidates of `tests/adversarial/gpu/candidates` (light and heavy, forked
from the current stream or not, honest ways of using several streams) with one warm pool
per task, and prints one row each: what was expected, the verdict, and the check that ran.
Exits non-zero when any verdict is not the expected one.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cudaopt.judge import (  # noqa: E402
    JudgeOptions,
    JudgePool,
    Status,
    build_kernels,
    check,
    default_build_dir,
    worker_env,
)

FOLDER = ROOT / "tests" / "adversarial" / "gpu" / "candidates"
CASES = {  # task -> [(candidate, refused?)]
    "diag_task.py": [("diag_forked_stream", True), ("diag_private_stream", True),
                     ("diag_honest", False), ("diag_joined_streams", False),
                     ("diag_legacy_stream", False)],
    "task.py": [("side_stream", True), ("forked_stream", True), ("forked_stream_sync", True),
                ("honest_streams", False), ("honest_tiled", False), ("honest_cublas", False)],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", action="store_true", help="also time the honest ones")
    args = parser.parse_args()
    build = build_kernels(FOLDER / "kernels", default_build_dir(FOLDER / "task.py", "cuda"), 900)
    if not build.ok:
        sys.exit(build.log[-4000:])
    options = JudgeOptions(device="cuda", profile=args.profile, compile_baseline=False,
                           time_budget_s=3.0)
    wrong = 0
    print(f"{'candidate':<22} {'expected':<8} {'status':<10} {'reward':>6} {'vs eager':>9}  check")
    for task, cases in CASES.items():
        pool = JudgePool(worker_env(options))
        try:
            for name, refused in cases:
                start = time.perf_counter()
                verdict = check(FOLDER / task, FOLDER / f"{name}.py", options, pool=pool)
                good = (verdict.status is Status.VIOLATION) if refused else (
                    verdict.status is Status.OK)
                wrong += not good
                speed = f"{verdict.speedup_vs_eager:.2f}x" if verdict.speedup_vs_eager else "-"
                print(f"{name:<22} {'refuse' if refused else 'pass':<8} "
                      f"{verdict.status.value:<10} {verdict.reward:>6g} {speed:>9}  "
                      f"{verdict.stream_check or '-'} ({time.perf_counter() - start:.0f} s)"
                      + ("" if good else "  <-- UNEXPECTED"), flush=True)
                for line in (verdict.violations + verdict.mismatch)[:2]:
                    print(f"    {line[:300]}")
                if verdict.error:
                    print("    " + verdict.error[-1500:].replace("\n", "\n    "))
        finally:
            pool.close()
    print(f"\n{wrong} unexpected verdict(s)")
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
