"""Where one judgement's time goes: `cudaopt check` per task, as a user runs it, by phase.

    python benchmarks/judge_phases.py SAMPLE [--repeat 2] [--limit N] [--device cuda]
        [--timeout 300] [--cache DIR]

SAMPLE is a folder made by `kernelbench_sample.py` (SAMPLE/levelL/<task>.py and
SAMPLE/candidates/levelL/<task>/model_new.py). Each task is checked `--repeat` times in a
row, each a new `cudaopt check` process; the first starts from empty caches (a fresh
`--cache` folder unless one is given), later ones find the caches the first filled (what
a second judgement of the same task costs on this machine). Every judgement prints one
line as soon as it ends: its wall time, the verdict's phases and their sub-phases
(`phases_s`; a sub-phase names a worker's step that may overlap other phases), the
torch.compile cache story and the speedups (identity candidates: about 1.00x). A check
past `--timeout` is killed with everything it started.

The checks judge through the machine's warm judge, as a user's do (`CUDAOPT_WARM_JUDGE=0`
in the environment: each in its own processes): the first check of the run starts it, a
later check of the same task finds its workers loaded, and the first check of the next task
finds that task's processes started ahead (`boot_waited` below `boot` in its sub-phases).
The warm judge started here lives in a temporary folder of this run's and is stopped at the
end, on Ctrl-C and on SIGTERM.
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

TOP = ("lock", "build", "load", "verify", "baselines", "timing", "warm", "streams")


def judge(task: Path, candidate: Path, device: str, env: dict[str, str],
          timeout_s: float) -> tuple[float, dict | None, str]:
    out = Path(tempfile.mkdtemp(prefix="phases-")) / "verdict.json"
    argv = [sys.executable, "-m", "cudaopt.cli", "check", str(task), str(candidate),
            "--device", device, "--json", str(out)]
    started = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True, text=True)
    try:
        log, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        log, _ = proc.communicate()
        return time.perf_counter() - started, None, "timeout\n" + log[-2000:]
    wall = time.perf_counter() - started
    return wall, json.loads(out.read_text()) if out.is_file() else None, log[-2000:]


def warm_judges(folder: Path | None = None) -> set[int]:
    """The pids of this machine's warm judges (of those serving under `folder`, if given)."""
    found = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"cudaopt.judge.serving.machine_main" in argv and (
                folder is None or str(folder).encode() in argv):
            found.add(int(pid))
    return found


def stop_judges(folder: Path | None = None, keep: frozenset[int] = frozenset()) -> None:
    """Kill the warm judges (and their workers, a process group each) this run started:
    those under `folder`, or all but `keep`."""
    for pid in warm_judges(folder) - keep:
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def line(name: str, run: int, wall: float, verdict: dict) -> str:
    phases = verdict.get("phases_s") or {}
    top = " ".join(f"{p} {phases[p]:.1f}" for p in TOP if p in phases)
    subs = " ".join(f"{k} {v:.1f}" for k, v in phases.items() if "." in k and v >= 0.05)
    speed = (f"x{verdict.get('speedup_vs_eager') or 0:.3f} eager "
             f"x{verdict.get('speedup_vs_compile') or 0:.3f} compile")
    cache = verdict.get("baseline_cache") or {}
    return (f"{name} #{run}: {wall:.1f} s wall, {verdict['status']} correct="
            f"{verdict['correct']} {speed} eager {verdict.get('eager_ms') or 0:.3f} ms "
            f"rounds {verdict.get('timing_rounds')}\n    phases: {top}\n    sub: {subs}\n"
            f"    compile cache: {cache}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sample", type=Path)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--cache", type=Path, default=None)
    args = parser.parse_args()
    cache = args.cache or Path(tempfile.mkdtemp(prefix="judge-cache-"))
    sockets = Path(tempfile.mkdtemp(prefix="judge-phases-"))
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "CUDAOPT_ALLOW": "*",
           "PYTHONUNBUFFERED": "1", "TMPDIR": str(sockets)}
    tasks = sorted(args.sample.glob("level*/*.py"))[: args.limit or None]
    print(f"{len(tasks)} tasks, caches in {cache}", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        run_all(args, tasks, env)
    finally:
        stop_judges(sockets)


def run_all(args: argparse.Namespace, tasks: list[Path], env: dict[str, str]) -> None:
    for task in tasks:
        candidate = args.sample / "candidates" / task.parent.name / task.stem / "model_new.py"
        for run in range(1, args.repeat + 1):
            wall, verdict, log = judge(task, candidate, args.device, env, args.timeout)
            name = f"{task.parent.name}/{task.stem}"
            print(line(name, run, wall, verdict) if verdict else
                  f"{name} #{run}: {wall:.1f} s, no verdict: {log}", flush=True)


if __name__ == "__main__":
    main()
