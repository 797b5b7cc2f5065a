"""A CPU executor judging a real kernel win while other items' `load_inline` builds run
ahead: the win's rewards and noise flags.

    python benchmarks/prebuild_noise.py [--pairs 4] [--work DIR]

Submits, in one batch to a `LocalExecutor("cpu")`, `--pairs` pairs of items: the shipped
`examples/fused_swish_cpu` (a 2.4-2.6x win over eager on 2 cores) and a KernelBench-style
`load_inline` candidate (`tests/judge/inline/swish_inline.py`, made distinct per pair so each
one compiles). The slot judges the swish items first (the task it holds warm) while the
executor's CPU pool builds the `load_inline` items ahead. Prints each item's reward, noise
flag and speedup over eager as it comes, then the wall time. A build that ran beside a
swish item's timing rounds shows as `noisy True` and reward 1 on that item.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cudaopt.executor import Job, LocalExecutor, Sources  # noqa: E402
from cudaopt.judge import JudgeOptions  # noqa: E402

SWISH = ROOT / "examples" / "fused_swish_cpu"
INLINE = ROOT / "tests" / "judge" / "inline" / "swish_inline.py"
ZOO_TASK = ROOT / "tests" / "judge" / "zoo" / "task.py"


def batch(work: Path, pairs: int) -> list[tuple[str, Sources]]:
    items = []
    for i in range(pairs):
        items.append((f"swish{i}", Sources.from_files(SWISH / "model.py", SWISH / "model_new.py")))
        candidate = work / f"inline{i}" / "model_new.py"
        candidate.parent.mkdir(parents=True, exist_ok=True)
        candidate.write_text(INLINE.read_text().replace(
            "#include <cmath>", f"#include <cmath>\n// item {i}, {time.time()}"))
        items.append((f"inline{i}", Sources.from_files(ZOO_TASK, candidate)))
    return items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="cudaopt-prebuild-noise-"))
    options = JudgeOptions(device="cpu", cache_dir=work / "cache")
    started = time.perf_counter()
    with LocalExecutor("cpu", root=work / "exec") as executor:
        futures = [(name, executor.submit(Job(name, "judge", sources, options)))
                   for name, sources in batch(work, args.pairs)]
        for name, future in futures:
            result = future.result(timeout=1800)
            verdict = result.verdict or {}
            print(f"{name:8} reward {verdict.get('reward')}  noisy {verdict.get('noisy')}  "
                  f"x{verdict.get('speedup_vs_eager') or 0:.2f} eager  "
                  f"built ahead {result.extra.get('built_ahead')} {result.infra_error or ''}",
                  flush=True)
    print(f"wall {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
