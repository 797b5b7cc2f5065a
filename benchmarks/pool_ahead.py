"""What a pool that starts the next task's processes ahead saves per task change.

    python benchmarks/pool_ahead.py [--device cpu|cuda] [--tasks 4] [--repeat 2]

A bench's slot judges one task after another. Each new task needs new reference and
baseline processes (they hold the task's model and compiled baseline); a pool with
`ahead=True` (a GPU slot's) starts them the moment a judgement takes the previous ones,
so their start overlaps that judgement. This judges `--tasks` different tasks (the test
zoo's task with other constants) in sequence, with the same pool, once without and once
with `ahead`, and prints each judgement's wall time and the mean over all but the first
(which no pool can have prepared). On a CPU the overlap competes with the timing for the
cores, which is why CPU slots leave it off; the figure there shows the mechanism, the GPU
figure what a bench gains.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cudaopt.judge import JudgeOptions, Status, check, worker_env  # noqa: E402
from cudaopt.judge.workers.pool import JudgePool  # noqa: E402

ZOO = ROOT / "tests" / "judge" / "zoo"


def tasks(folder: Path, count: int) -> list[Path]:
    """`count` tasks of different content (another scale each): each needs new processes."""
    made = []
    for i in range(count):
        path = folder / f"task{i}" / "model.py"
        path.parent.mkdir()
        path.write_text((ZOO / "task.py").read_text().replace("0.75", f"0.{75 - i}"))
        made.append(path)
    return made


def run(task_files: list[Path], options: JudgeOptions, ahead: bool) -> list[float]:
    pool = JudgePool(worker_env(options), ahead=ahead)
    walls = []
    try:
        pool.prestart_for(options, options.device)
        for task in task_files:
            started = time.perf_counter()
            verdict = check(task, ZOO / "correct.py", options, pool=pool)
            walls.append(time.perf_counter() - started)
            if verdict.status is not Status.OK:
                sys.exit(f"{task}: {verdict.status.value}: {verdict.error[-2000:]}")
            pool.prestart_for(options, options.device)  # as a slot does after each job
            print(f"  ahead={ahead!s:<5} {task.parent.name}: {walls[-1]:.2f} s", flush=True)
    finally:
        pool.close()
    return walls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--tasks", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    options = JudgeOptions(device=args.device, time_budget_s=1.0)
    later: dict[bool, list[float]] = {False: [], True: []}
    with tempfile.TemporaryDirectory(prefix="cudaopt-ahead-") as tmp:
        for r in range(args.repeat):
            for ahead in (False, True):
                folder = Path(tmp) / f"r{r}-{ahead}"
                folder.mkdir()
                later[ahead] += run(tasks(folder, args.tasks), options, ahead)[1:]
    print(f"\njudgements of a new task after the first, {args.device}, "
          f"{args.tasks} tasks x {args.repeat}")
    print(f"{'pool':<16}{'mean s':>8}{'median s':>10}")
    print("-" * 34)
    for ahead, walls in later.items():
        label = "ahead" if ahead else "after each job"
        print(f"{label:<16}{statistics.mean(walls):>8.2f}{statistics.median(walls):>10.2f}")
    saved = statistics.mean(later[False]) - statistics.mean(later[True])
    print(f"saved per task change: {saved:.2f} s")


if __name__ == "__main__":
    main()
