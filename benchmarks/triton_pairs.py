"""Triton and CUDA C++ kernels for the same KernelBench tasks, judged in one GPU run.

    python benchmarks/triton_pairs.py KernelBench/ [--time 540] [--out DIR] [--only NAME ...]
        [--dry-run]

Issue 36's figures: six real level-1 tasks, each with an honest Triton candidate
(`benchmarks/triton_pairs/triton/<task>/model_new.py`) and an honest CUDA C++ one
(`benchmarks/triton_pairs/cuda/<task>/model_new.py`, `load_inline`). The task files are
copied from the KernelBench folder given (never kept in this repository) into a temporary
suite, then `cudaopt bench` judges the Triton candidates and then the CUDA ones on that
suite (`--sandbox none`: the candidates are ours). Each result is printed as it lands in
the bench's results.jsonl; the end is an 80-column table of both backends per task, with
the Triton compile's share from the verdicts' `phases_s` (`verify.first_trial`).

The whole run stops at `--time` seconds (default 540, under a 10-minute call): each bench
runs in a process group of its own, which is killed on the deadline, on Ctrl-C and on
SIGTERM, so nothing it started outlives the script; a warm judge the benches started (the
CUDA bench borrows the pairs the Triton one lent it) is stopped at the end. Finished lines
stay in `--out`, and running the same command with the same `--out` continues without
re-judging them.
`--dry-run` assembles the suite, checks every candidate is where bench looks for it, and
prints the commands without running them (it works on a machine without a GPU).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from judge_phases import stop_judges, warm_judges  # noqa: E402

from cudaopt.bench.results import read_lines  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PAIRS = ROOT / "benchmarks" / "triton_pairs"
BACKENDS = ("triton", "cuda")  # judged in this order; T and C in the table
TASKS = ("level1/19_ReLU", "level1/23_Softmax", "level1/36_RMSNorm_", "level1/38_L1Norm_",
         "level1/47_Sum_reduction_over_a_dimension", "level1/88_MinGPTNewGelu")
POLL_S = 1.0
GRACE_S = 15.0  # after SIGTERM, before SIGKILL: bench keeps its finished lines on SIGTERM
WIDTH = 80


class Stop(Exception):
    """SIGTERM, raised where the script is, so the cleanup of Ctrl-C runs for it too."""


def assemble_suite(kernelbench: Path, dest: Path) -> list[Path]:
    """Copies the task files into `dest/<level>/`, so bench names each `<level>/<stem>`
    exactly as the candidates' folders are named. Missing files stop the run before
    anything is started."""
    missing = [t for t in TASKS if not (kernelbench / f"{t}.py").is_file()]
    if missing:
        sys.exit(f"not in {kernelbench}: {', '.join(t + '.py' for t in missing)}")
    copied = []
    for task in TASKS:
        target = dest / f"{task}.py"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(kernelbench / f"{task}.py", target)
        copied.append(target)
    return copied


def check_candidates() -> None:
    """Each task must have both candidates in layout 1 of docs/bench.md
    (`DIR/<task>/model_new.py`): a missing one would be judged `no_candidate`, not fail."""
    missing = [str(PAIRS / b / t.split("/")[1] / "model_new.py")
               for b in BACKENDS for t in TASKS
               if not (PAIRS / b / t.split("/")[1] / "model_new.py").is_file()]
    if missing:
        sys.exit("candidates missing:\n  " + "\n  ".join(missing))


def bench_argv(suite: Path, backend: str, out: Path, device: str,
               gpus: str | None) -> list[str]:
    """The bench command for one backend's candidates over the suite."""
    argv = [sys.executable, "-m", "cudaopt.cli", "bench", "run", str(suite), "--candidates",
            str(PAIRS / backend), "--device", device, "--out", str(out / backend),
            "--sandbox", "none"]
    return argv + (["--gpus", gpus] if gpus else [])


def ratio(value: object) -> str:
    return f"{value:.2f}" if isinstance(value, (int, float)) else "-"


def warm(line: dict, name: str) -> object:
    """The warm back-to-back speedup, where the line carries the verdict's `warm`."""
    return (line.get("warm") or {}).get(f"speedup_vs_{name}")


def triton_compile_s(line: dict) -> float | None:
    """Seconds of the judge's first verification trial (`verify.first_trial`: a Triton
    kernel compiles and autotunes there, so the Triton column less the CUDA one is about the
    compile), or of the whole verification where an older verdict has no such phase."""
    phases = line.get("phases_s") or {}
    spent = phases.get("verify.first_trial", phases.get("verify"))
    return spent if isinstance(spent, (int, float)) else None


def describe(backend: str, line: dict) -> str:
    """One line per result, printed as it arrives."""
    ok = "correct" if line.get("correct") else f"NOT correct ({line.get('status')})"
    kernels = ", ".join(line.get("kernels_ran") or []) or "-"
    text = (f"[{backend:6}] {line.get('task')}: {ok}, reward {line.get('reward')}, "
            f"x{ratio(line.get('speedup_vs_eager'))} eager, "
            f"x{ratio(line.get('speedup_vs_compile'))} compile, "
            f"warm x{ratio(warm(line, 'compile'))} compile, kernels: {kernels}")
    error = (line.get("infra_error") or line.get("error") or "").strip()
    why = (line.get("violations") or [""])[0] or (error.splitlines()[-1] if error else "")
    if why and (not line.get("correct") or line.get("reward") == -1):
        text += f"\n         {line.get('status')}: {why[:WIDTH * 2]}"
    elif line.get("reward") == 1 and (line.get("speedup_vs_eager") or 0) > 1:
        notes = [w for w in line.get("warnings") or [] if "without isolation" not in w]
        notes += ["noisy"] if line.get("noisy") else []
        cold_low = ratio(line.get("speedup_vs_eager_low"))
        warm_low = ratio((line.get("warm") or {}).get("speedup_vs_eager_low"))
        text += (f"\n         no speed milestone: cold low x{cold_low}, warm low x{warm_low} "
                 f"eager; {'; '.join(notes)[:WIDTH * 2] or '-'}")
    return text


def gpu_holders() -> str:
    """What holds the GPU's memory now, process by process (nvidia-smi; empty without it):
    a bench that finds the device full says who filled it."""
    try:
        total = subprocess.run(["nvidia-smi", "--query-gpu=memory.used,memory.total",
                                "--format=csv,noheader"], capture_output=True, text=True,
                               timeout=30).stdout.strip()
        apps = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory",
                               "--format=csv,noheader"], capture_output=True, text=True,
                              timeout=30).stdout.split("\n")
    except (OSError, subprocess.SubprocessError):
        return ""
    lines = [f"GPU memory used, total: {total}"]
    for app in filter(None, (a.strip() for a in apps)):
        pid = app.split(",")[0].strip()
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            argv = "(not visible here)"
        lines.append(f"  {app}: {argv[:WIDTH * 2]}")
    return "\n".join(lines)


def new_lines(bench: Path, seen: set[str]) -> Iterator[dict]:
    """Lines of the bench not yet printed."""
    for line in read_lines(bench):
        key = f"{line.get('task')}:{line.get('finished')}"
        if key not in seen:
            seen.add(key)
            yield line


def stop_group(proc: subprocess.Popen) -> None:
    """SIGTERM to the bench's whole process group (slots, workers, builds), also when the
    bench itself has exited, then SIGKILL to what is left after the grace period."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        proc.wait()
        return  # nothing of the group is left
    end = time.monotonic() + GRACE_S
    while time.monotonic() < end:
        if proc.poll() is not None and not group_alive(proc.pid):
            return
        time.sleep(0.2)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def run_bench(argv: list[str], backend: str, out: Path, deadline: float) -> str:
    """Runs one bench in its own process group, printing each result as it lands; its own
    output goes to `out/<backend>.log`. Returns how it ended."""
    bench = out / backend
    seen: set[str] = set()
    for line in new_lines(bench, seen):  # lines of an earlier run into the same --out
        print(describe(backend, line), flush=True)
    with open(out / f"{backend}.log", "ab") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True, cwd=ROOT)
        try:
            while proc.poll() is None and time.monotonic() < deadline:
                time.sleep(POLL_S)
                for line in new_lines(bench, seen):
                    print(describe(backend, line), flush=True)
        finally:
            timed_out = proc.poll() is None
            stop_group(proc)
    for line in new_lines(bench, seen):
        print(describe(backend, line), flush=True)
    if timed_out:
        return "stopped at the time limit"
    return "finished" if proc.returncode == 0 else f"exited {proc.returncode} (see the log)"


def pair(line_t: dict | None, line_c: dict | None, get: Callable[[dict], object]) -> str:
    """`T/C` of one figure, `-` where a backend has no line or no value."""
    return "/".join(ratio(get(x)) if x else "-" for x in (line_t, line_c))


def correct_pair(line_t: dict | None, line_c: dict | None) -> str:
    return "/".join("-" if x is None else ("y" if x.get("correct") else "n")
                    for x in (line_t, line_c))


def table(out: Path) -> list[str]:
    """The 80-column table: per task, Triton/CUDA correctness, the cold speedups against
    eager and torch.compile, the warm one against torch.compile, and Triton's compile."""
    by = {b: {x["task"]: x for x in read_lines(out / b) if "task" in x} for b in BACKENDS}
    head = (f"{'task':<27}{'ok T/C':>7}{'eager T/C':>12}{'compile T/C':>12}"
            f"{'warm cmp T/C':>13}{'T jit s':>9}")
    rows = [head, "-" * WIDTH]
    for task in TASKS:
        t, c = by["triton"].get(task), by["cuda"].get(task)
        jit = triton_compile_s(t) if t else None
        rows.append(f"{task.split('/')[1][:26]:<27}{correct_pair(t, c):>7}"
                    f"{pair(t, c, lambda x: x.get('speedup_vs_eager')):>12}"
                    f"{pair(t, c, lambda x: x.get('speedup_vs_compile')):>12}"
                    f"{pair(t, c, lambda x: warm(x, 'compile')):>13}"
                    f"{'-' if jit is None else f'{jit:.1f}':>9}")
    rows.append("speedups are x (cold per call, the judge's reward figure); warm: back to "
                "back")
    return rows


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kernelbench", type=Path,
                        help="KernelBench's task folder (holding level1/)")
    parser.add_argument("--time", type=float, default=540.0,
                        help="seconds for the whole run; what runs then is stopped")
    parser.add_argument("--out", type=Path, default=None,
                        help="bench folders go to OUT/triton and OUT/cuda "
                             "(default: a new .cudaopt/bench/triton_pairs-<time>)")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--gpus", default=None, help="passed to bench, e.g. 0")
    parser.add_argument("--only", nargs="+", default=None, metavar="NAME",
                        help="judge only the tasks whose name holds one of these, e.g. Softmax")
    parser.add_argument("--dry-run", action="store_true",
                        help="assemble the suite and print the commands; run nothing")
    args = parser.parse_args(argv)
    if args.time <= 0:
        parser.error("--time must be positive")
    if (args.kernelbench / "KernelBench" / "level1").is_dir():  # the repository's root
        args.kernelbench = args.kernelbench / "KernelBench"
    if args.out is None:
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        args.out = ROOT / ".cudaopt" / "bench" / f"triton_pairs-{stamp}"
    return args


def _raise_stop(signum: int, frame: object) -> None:
    raise Stop


def main(argv: list[str] | None = None) -> int:
    global TASKS
    args = parse(argv)
    if args.only:
        TASKS = tuple(t for t in TASKS if any(name in t for name in args.only))
    deadline = time.monotonic() + args.time
    check_candidates()
    with tempfile.TemporaryDirectory(prefix="triton_pairs_suite_") as tmp:
        suite = Path(tmp) / "suite"
        for path in assemble_suite(args.kernelbench, suite):
            print(f"task {path.relative_to(suite)}", flush=True)
        commands = {b: bench_argv(suite, b, args.out, args.device, args.gpus)
                    for b in BACKENDS}
        if args.dry_run:
            for backend, command in commands.items():
                print(f"{backend}: {' '.join(command)}")
            return 0
        args.out.mkdir(parents=True, exist_ok=True)
        signal.signal(signal.SIGTERM, _raise_stop)
        judges_before = frozenset(warm_judges())
        status = 0
        try:
            for i, (backend, command) in enumerate(commands.items()):
                left = deadline - time.monotonic()
                if left <= 0:
                    print(f"[{backend:6}] not started: no time left", flush=True)
                    status = 1
                    continue
                share = time.monotonic() + left / (len(commands) - i)  # the rest to the last
                print(gpu_holders(), flush=True)
                ended = run_bench(command, backend, args.out, share)
                print(f"[{backend:6}] bench {ended}", flush=True)
                status |= ended != "finished"
        except (KeyboardInterrupt, Stop):
            print("interrupted: the benches were stopped", flush=True)
            status = 130
        stop_judges(keep=judges_before)  # the benches lent their pairs to a warm judge
        print(gpu_holders(), flush=True)
        print("\n".join(table(args.out)))
        print(f"results: {args.out}/triton, {args.out}/cuda (logs beside them)")
        return status


if __name__ == "__main__":
    sys.exit(main())
