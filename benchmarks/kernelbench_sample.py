"""A random sample of real KernelBench tasks, with identity candidates, for GPU benchmarks.

    python benchmarks/kernelbench_sample.py KERNELBENCH_DIR OUT [--n 20] [--seed 0]
        [--levels 1,2,3] [--exclude PATTERN ...]

KERNELBENCH_DIR is the `KernelBench/` folder of an upstream checkout (with level1/ ...;
bring it, never commit it). Writes OUT/levelL/<task>.py (unchanged copies) and
OUT/candidates/levelL/<task>/model_new.py: a `ModelNew` that subclasses the task's `Model`
(the same constructor, the same weights, the same operators), to be judged with every
operator allowed (`CUDAOPT_ALLOW='*'`). Such a candidate is exactly as fast as eager: a
judge that reports it within a few percent of 1.00x measures honestly, and its figures
per task show what the judge itself costs. Prints the chosen tasks.
"""

from __future__ import annotations

import argparse
import random
import shutil
from pathlib import Path

IDENTITY = '''

class ModelNew(Model):
    """Identity candidate: the task's own model (judged with every operator allowed)."""
'''


def sample(root: Path, n: int, seed: int, levels: list[int],
           exclude: list[str]) -> list[Path]:
    pool = [path for level in levels for path in sorted((root / f"level{level}").glob("*.py"))
            if not any(pattern in path.name for pattern in exclude)]
    if not pool:
        raise SystemExit(f"no tasks under {root}/level{{{','.join(map(str, levels))}}}")
    return sorted(random.Random(seed).sample(pool, min(n, len(pool))),
                  key=lambda p: (p.parent.name, p.name))


def write(tasks: list[Path], out: Path) -> None:
    for task in tasks:
        level = task.parent.name
        (out / level).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(task, out / level / task.name)
        folder = out / "candidates" / level / task.stem
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "model_new.py").write_text(task.read_text() + IDENTITY)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernelbench", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--levels", default="1,2,3")
    parser.add_argument("--exclude", nargs="*", default=[])
    args = parser.parse_args()
    tasks = sample(args.kernelbench, args.n, args.seed,
                   [int(x) for x in args.levels.split(",")], args.exclude)
    write(tasks, args.out)
    for task in tasks:
        print(f"{task.parent.name}/{task.name}")


if __name__ == "__main__":
    main()
