"""Identity candidates: each task's own `Model`, renamed `ModelNew`, judged like any kernel.

    python benchmarks/identity.py TASK_DIR... [--device cuda|cpu] [--no-compile]
                                  [--time-budget S] [--pool] [--json OUT]
    python benchmarks/identity.py            # the project's own tasks (see DEFAULT_DIRS)

The same code must time the same on both sides: every identity ratio (eager time over the
candidate's) should lie within ±3% of 1, and none may fail. A ratio below that means the
candidate's process adds a per-call or per-operator cost that every real kernel pays too;
a failure means the judge refuses correct code. Task files are found recursively: any
`.py` file with `class Model`, `get_inputs` and `get_init_inputs` (KernelBench's layout, or
a folder of `model.py` files). Prints one line per task as it goes, then the false
failures and the distribution of ratios. Each line also says what the judge's own clock
around the back-to-back bursts added to the candidate's warm figure (`warm.judge_clock`):
an identity candidate should be charged nothing beyond its noise. `--pool` judges every
task in one warm pool, as a bench slot, the reward service or an agent run does: its next
candidate process starts while the current judgement runs.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cudaopt.judge import JudgeOptions, JudgePool, Status, Verdict, check, worker_env  # noqa: E402

DEFAULT_DIRS = [ROOT / "benchmarks" / "identity_tasks", ROOT / "benchmarks" / "kernelbench",
                ROOT / "examples"]
TOLERANCE = 0.03


def find_tasks(folders: list[Path]) -> list[tuple[str, Path]]:
    """(label, file) of the KernelBench-format task files under `folders` (candidates
    excluded); the label is the file's path from the folder given, folder name first."""
    found = []
    for folder in folders:
        files = [folder] if folder.is_file() else sorted(folder.rglob("*.py"))
        for path in files:
            text = path.read_text(errors="replace")
            if (re.search(r"^class Model\b", text, re.M) and "def get_inputs" in text
                    and "def get_init_inputs" in text and "class ModelNew" not in text):
                base = folder.parent if folder.is_dir() else folder.parent.parent
                found.append((str(path.relative_to(base)), path))
    return found


def identity_of(task: Path, into: Path) -> Path:
    """The task's source with `Model` renamed `ModelNew` everywhere (`super(Model, self)`)."""
    folder = into / re.sub(r"\W", "_", str(task.resolve()))[-80:]
    folder.mkdir(parents=True)
    candidate = folder / "model_new.py"
    candidate.write_text(re.sub(r"\bModel\b", "ModelNew", task.read_text()))
    return candidate


def cold_ratio(verdict: Verdict) -> float | None:
    """Eager over the candidate, single calls with a flushed cache (the judge's figure)."""
    return verdict.speedup_vs_eager


def warm_identity_ratio(verdict: Verdict) -> float | None:
    """Eager over the candidate, warm back-to-back calls (the verdict's `warm` figures);
    None where the judgement had none, and the column prints '-'."""
    warm = (verdict.warm or {}).get("speedup_vs_eager")
    return float(warm) if isinstance(warm, (int, float)) else None


def judge_all(tasks: list[tuple[str, Path]], options: JudgeOptions,
              pool: JudgePool | None = None) -> list[dict[str, object]]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="identity-") as scratch:
        for number, (label, task) in enumerate(tasks, 1):
            start = time.perf_counter()
            verdict = check(task, identity_of(task, Path(scratch)), options, pool=pool)
            row = {"task": label, "status": verdict.status.value,
                   "cold": cold_ratio(verdict), "warm": warm_identity_ratio(verdict),
                   "eager_ms": verdict.eager.median_ms if verdict.eager else None,
                   "candidate_ms": verdict.candidate.median_ms if verdict.candidate else None,
                   "noisy": getattr(verdict, "noisy", False),
                   "clock_added_ms": ((verdict.warm or {}).get("judge_clock") or {}).get(
                       "added_ms"),
                   "why": (verdict.violations or verdict.mismatch or [verdict.error])[0][:300]
                   if verdict.status is not Status.OK else ""}
            rows.append(row)
            print(f"[{number}/{len(tasks)}] {row['task']}: {row['status']} cold "
                  f"{_x(row['cold'])} warm {_x(row['warm'])} (the judge's clock added "
                  f"{_ms(row['clock_added_ms']).strip()} ms a warm call; "
                  f"{time.perf_counter() - start:.0f} s)", flush=True)
    return rows


def report(rows: list[dict[str, object]]) -> int:
    """The table, the false failures and the distribution; the number of problems."""
    print(f"\n{'task':<40} {'status':<10} {'eager ms':>9} {'cand ms':>9} {'cold':>7} "
          f"{'warm':>7}")
    for r in rows:
        print(f"{_cut(r['task'], 40):<40} {r['status']:<10} {_ms(r['eager_ms'])} "
              f"{_ms(r['candidate_ms'])} {_x(r['cold'])} {_x(r['warm'])}"
              + ("  noisy" if r["noisy"] else ""))
    failures = [r for r in rows if r["status"] != Status.OK.value]
    print(f"\nfalse failures: {len(failures)} of {len(rows)}")
    for r in failures:
        print(f"  {r['task']}: {r['status']}: {r['why']}")
    problems = len(failures)
    for kind in ("cold", "warm"):
        ratios = sorted(r[kind] for r in rows if isinstance(r[kind], float))
        if not ratios:
            print(f"{kind}: no figures (the verdict does not carry them)")
            continue
        outside = [r for r in rows if isinstance(r[kind], float)
                   and abs(r[kind] - 1) > TOLERANCE]
        problems += len(outside)
        quart = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
        print(f"{kind} identity ratio: min {ratios[0]:.3f}  q1 {quart[0]:.3f}  median "
              f"{statistics.median(ratios):.3f}  q3 {quart[2]:.3f}  max {ratios[-1]:.3f}  "
              f"outside ±{TOLERANCE:.0%}: {len(outside)} of {len(ratios)}")
        for r in outside:
            print(f"  {r['task']}: {r[kind]:.3f}")
    return problems


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else "…" + text[-width + 1:]


def _x(value: object) -> str:
    return f"{value:>6.3f}x" if isinstance(value, float) else f"{'-':>7}"


def _ms(value: object) -> str:
    return f"{value:>9.4f}" if isinstance(value, float) else f"{'-':>9}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="*", type=Path, default=DEFAULT_DIRS)
    parser.add_argument("--device", default=None)
    parser.add_argument("--no-compile", action="store_true",
                        help="skip the torch.compile baseline (the ratio is against eager)")
    parser.add_argument("--time-budget", type=float, default=10.0)
    parser.add_argument("--pool", action="store_true",
                        help="judge every task in one warm pool")
    parser.add_argument("--json", type=Path, help="write the rows here")
    args = parser.parse_args()
    tasks = find_tasks([d for d in args.dirs if d.exists()])
    if not tasks:
        sys.exit(f"no KernelBench-format task files under {', '.join(map(str, args.dirs))}")
    options = JudgeOptions(device=args.device, allow=["*"], time_budget_s=args.time_budget,
                           compile_baseline=not args.no_compile)
    pool = JudgePool(worker_env(options)) if args.pool else None
    try:
        rows = judge_all(tasks, options, pool)
    finally:
        if pool is not None:
            pool.close()
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    sys.exit(1 if report(rows) else 0)


if __name__ == "__main__":
    main()
