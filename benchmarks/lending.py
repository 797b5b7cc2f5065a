"""What a task's processes outliving their pool saves: one judgement per new process, as a
later bench slot, agent run or reward service judges a task an earlier one loaded.

    python benchmarks/lending.py TASK CANDIDATE [--device cpu|cuda] [--processes 3]
        [--timeout 600]

Each round starts `--processes` new Python processes one after the other; each builds a
warm `JudgePool` (as a slot or an agent run does), judges CANDIDATE against TASK once and
closes its pool. With lending, the pool gives its loaded pair to the machine's warm judge
and the next process's pool borrows it; without (`CUDAOPT_WARM_JUDGE=0`), every process
loads the task again. Each judgement prints its wall time and its `load.reference` and
`baselines` seconds as soon as it ends; a table follows. The warm judge started here lives
in a temporary folder of this run's and is stopped at the end, on Ctrl-C and on SIGTERM.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from judge_phases import stop_judges  # noqa: E402

POOL = """
import json, sys, time
from pathlib import Path
from cudaopt.judge import JudgeOptions, JudgePool, check, machine_lender, worker_env
started = time.perf_counter()
options = JudgeOptions(device=sys.argv[3])
pool = JudgePool(worker_env(options))
pool.lender = machine_lender()
verdict = check(Path(sys.argv[1]), Path(sys.argv[2]), options, pool=pool)
judged = time.perf_counter() - started
pool.close()
print(json.dumps({"correct": verdict.correct, "judged_s": judged, "phases": verdict.phases_s,
                  "speedup": verdict.speedup_vs_eager}))
"""


def one(task: Path, candidate: Path, device: str, env: dict[str, str],
        timeout_s: float) -> tuple[float, dict | None, str]:
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", POOL, str(task), str(candidate), device],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        return time.perf_counter() - started, None, "timeout"
    wall = time.perf_counter() - started
    line = next((x for x in out.splitlines() if x.startswith("{")), None)
    return wall, json.loads(line) if line else None, err[-1500:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("task", type=Path)
    parser.add_argument("candidate", type=Path)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="lending-"))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    rows: list[tuple[str, int, float, float, float]] = []
    try:
        for mode, on in (("lending", "1"), ("no lending", "0")):
            env = {**os.environ, "CUDAOPT_WARM_JUDGE": on, "TMPDIR": str(folder)}
            for n in range(1, args.processes + 1):
                wall, result, err = one(args.task, args.candidate, args.device, env,
                                        args.timeout)
                if result is None:
                    print(f"{mode:>10} #{n}: failed after {wall:.1f} s\n{err}", flush=True)
                    continue
                phases = result["phases"]
                load = sum(v for k, v in phases.items() if k.startswith("load.reference."))
                rows.append((mode, n, wall, load, phases.get("baselines", 0.0)))
                print(f"{mode:>10} #{n}: {wall:6.2f} s wall, judged {result['judged_s']:.2f}"
                      f" s, reference load {load:.2f} s, baselines"
                      f" {phases.get('baselines', 0.0):.2f} s, correct {result['correct']}",
                      flush=True)
            stop_judges(folder)
    finally:
        stop_judges(folder)
    print(f"\n{'mode':<12}{'process':>8}{'wall s':>10}{'ref. load s':>13}{'baselines s':>13}")
    for mode, n, wall, load, base in rows:
        print(f"{mode:<12}{n:>8}{wall:>10.2f}{load:>13.2f}{base:>13.2f}")


if __name__ == "__main__":
    main()
