"""Candidate-mode throughput of `cudaopt bench` on a CUDA machine.

    python benchmarks/bench_throughput.py [--skip-big] [--no-check] [--sample DIR] [--cold-only]
        [--lookahead 1,3]

Judges the project's own CUDA tasks (examples/, benchmarks/kernelbench/) and the small
KernelBench-format suite in benchmarks/suite/ (both candidate layouts: a folder per task
with kernels/, and KernelBench's generated-kernel file with load_inline), with correct
candidates, as:

1. `cudaopt bench` on GPU 0 alone, cold (fresh build folder and compile caches);
2. `cudaopt bench` on GPUs 0 and 1, cold (with two GPUs);
3. the last of these again with warm caches (re-judging, e.g. another GPU's results);
4. `cudaopt check` on each task one by one, cold, on GPU 0 (what bench replaces).

`--sample DIR` judges a folder made by `kernelbench_sample.py` instead (real KernelBench
tasks with identity candidates, every operator allowed); the summary then also says
whether every identity candidate was correct and timed within ±3% of eager. `--cold-only`
skips step 3 (a larger sample within one time limit). `--lookahead 1,3` runs step 1 once
per value, each cold (how many jobs a slot prepares while it times another).

All of it takes several minutes per run on an H200 (the two level-1-sized tasks alone
take a minute or more each); `--skip-big` leaves them out, `--no-check` skips step 4.
Printed: tasks judged per GPU-minute, the 2-GPU scaling ratio, bench's overhead over the
one-by-one checks, and the mean per-task phases from the verdicts (build, verify, timing)
and the time a task waited for a slot (queue). The candidates are our own: the shell
sandbox is off (--sandbox none).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIG = ("relu", "sum_reduce")  # level-1 sizes: gigabytes per call, tens of seconds each


def tasks(skip_big: bool) -> list[tuple[Path, Path]]:
    """(task file, candidate folder or file) of every CUDA task we ship."""
    found = [(ROOT / "examples" / n / "model.py", ROOT / "examples" / n)
             for n in ("fused_swish_cuda", "softplus_inline")]
    for folder in sorted((ROOT / "benchmarks" / "kernelbench").iterdir()):
        if not (skip_big and folder.name in BIG):
            found.append((folder / "model.py", folder))
    suite = ROOT / "benchmarks" / "suite"
    for task in sorted(suite.glob("level1/*.py")):
        found.append((task, suite / "candidates" / "level1" / task.stem))
    found.append((suite / "level2" / "1_Scale_Bias_ReLU.py",
                  suite / "candidates" / "level_2_problem_1_sample_0_kernel.py"))
    return found


def cpu_tasks(root: Path) -> list[tuple[Path, Path]]:
    """CPU tasks with C++ candidates: two kernels/ folders and a KernelBench-style
    load_inline file (for `--device cpu`: the executor's and the bench's own overhead)."""
    kb_task = root / "cpu_suite" / "level1" / "1_swish_inline.py"
    kb_task.parent.mkdir(parents=True)
    shutil.copy(ROOT / "tests" / "judge" / "zoo" / "task.py", kb_task)
    kb_cand = root / "kb" / "level_1_problem_1_sample_0_kernel.py"
    kb_cand.parent.mkdir()
    shutil.copy(ROOT / "tests" / "judge" / "inline" / "swish_inline.py", kb_cand)
    cpp = [ROOT / "examples" / "fused_swish_cpu", ROOT / "examples" / "prefix_sum_cpu"]
    return [(folder / "model.py", folder) for folder in cpp] + [(kb_task, kb_cand)]


def lay_out(found: list[tuple[Path, Path]], root: Path) -> tuple[list[Path], Path]:
    """Task files as they are, candidates copied into one folder in bench's layouts."""
    cands = root / "candidates"
    cands.mkdir(parents=True)
    for task, cand in found:
        if cand.is_file():  # KernelBench's layout: the file name says level and problem
            shutil.copy(cand, cands / cand.name)
            continue
        level, name = (task.parent.parent.name, task.parent.name) if task.name == "model.py" \
            else (task.parent.name, task.stem)
        dest = cands / level / name
        dest.mkdir(parents=True)
        shutil.copy(cand / "model_new.py", dest / "model_new.py")
        if (cand / "kernels").is_dir():
            shutil.copytree(cand / "kernels", dest / "kernels")
    return [task for task, _ in found], cands


def run(argv: list[str], env: dict[str, str], live: bool = False) -> subprocess.CompletedProcess:
    """A `cudaopt` command; stopped this script (a time limit's SIGTERM), it is stopped as
    a user would stop it, so it closes its slot and judge processes instead of leaving them
    to time on the GPU the next step measures. `live`: its output goes to stderr as it
    comes (a bench's line per task), so a run cut short still shows what it finished."""
    pipe = None if live else subprocess.PIPE
    proc = subprocess.Popen(argv, env=env, stdout=sys.stderr if live else pipe, stderr=pipe,
                            text=True, cwd=ROOT)
    try:
        out, err = proc.communicate()
    except BaseException:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
        raise
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def run_bench(task_files: list[Path], cands: Path, out: Path, work: Path, cache: Path,
              gpus: str | None, identity: bool = False,
              lookahead: int | None = None, save: Path | None = None) -> dict[str, object]:
    """`gpus` None: one CPU slot. `identity`: the candidates are identity candidates.
    `lookahead`: jobs each slot prepares ahead (None: the executor's default). `save`: a
    folder its results.jsonl is copied to, also when a time limit stops it."""
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    where = ["--device", "cpu"] if gpus is None else ["--device", "cuda", "--gpus", gpus]
    argv = [sys.executable, "-m", "cudaopt.cli", "bench", *map(str, task_files), "--candidates",
            str(cands), "--out", str(out), "--work", str(work), *where, "--sandbox", "none"]
    label = f"{'GPUs ' + gpus if gpus else 'CPU'}, {'warm' if (work / 'done').exists() else 'cold'}"
    if lookahead is not None:
        argv += ["--lookahead", str(lookahead)]
        label += f", ahead {lookahead}"
    start = time.perf_counter()
    try:
        proc = run(argv, env, live=True)
    finally:
        if save is not None and (out / "results.jsonl").exists():
            save.mkdir(parents=True, exist_ok=True)
            name = label.replace(", ", "-").replace(" ", "_")
            shutil.copyfile(out / "results.jsonl", save / f"{name}.jsonl")
    wall_s = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"bench failed ({proc.returncode}), its output above")
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    result = {"wall_s": wall_s, "gpus": len((gpus or "cpu").split(",")), "lines": lines}
    (work / "done").touch()
    print(f"  .. {row(label, result)[0]}\n  .. {phases(label, result)}", file=sys.stderr,
          flush=True)  # as it finishes: a run cut short by a time limit still reports these
    if identity:
        print(f"  .. {identity_summary(label, result)}", file=sys.stderr, flush=True)
    return result


def run_checks(found: list[tuple[Path, Path]], root: Path, cache: Path,
               device: str) -> dict[str, object]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "CUDA_VISIBLE_DEVICES": "0"}
    lines, start = [], time.perf_counter()
    for i, (task, cand) in enumerate(found):
        dest = root / f"check-{i}"
        if cand.is_file():
            dest.mkdir()
            shutil.copy(cand, dest / "model_new.py")
        else:
            shutil.copytree(cand, dest, ignore=shutil.ignore_patterns(".cudaopt"))
        verdict = dest / "verdict.json"
        done = run([sys.executable, "-m", "cudaopt.cli", "check", str(task),
                    str(dest / "model_new.py"), "--device", device, "--json", str(verdict)], env)
        if not verdict.exists():
            sys.exit(f"check failed ({done.returncode}):\n{done.stdout}\n{done.stderr[-3000:]}")
        data = json.loads(verdict.read_text())
        lines.append({**data, "queue_s": 0.0})
    return {"wall_s": time.perf_counter() - start, "gpus": 1, "lines": lines}


PHASES = ("lock", "build", "load", "verify", "baselines", "timing", "warm", "streams")


def _mean(values: list) -> float:
    values = [x for x in values if isinstance(x, (int, float))]
    return sum(values) / len(values) if values else float("nan")


def row(name: str, result: dict[str, object]) -> tuple[str, float]:
    lines, wall_s, gpus = result["lines"], result["wall_s"], result["gpus"]
    rate = len(lines) / (wall_s / 60) / gpus
    correct = sum(bool(x.get("correct")) for x in lines)
    per_task = _mean([x.get("wall_s") for x in lines])
    text = (f"{name:<21}{len(lines):>6}{gpus:>6}{wall_s:>8.1f}{rate:>10.2f}{correct:>5}/"
            f"{len(lines):<4}{per_task:>8.1f}")
    return text, rate


def phases(name: str, result: dict[str, object]) -> str:
    """Mean seconds per task in each phase of the judgement (the verdict's `phases_s`),
    the build run ahead on the CPU pool, and the wait for a slot."""
    lines = result["lines"]
    cells = [_mean([(x.get("phases_s") or {}).get(p) for x in lines]) for p in PHASES]
    cells += [_mean([x.get("build_ahead_s", 0.0) for x in lines]),
              _mean([x.get("queue_s") for x in lines])]
    return f"{name[:13]:<13}" + "".join(f"{c:>6.1f}" for c in cells)


IDENTITY_TOLERANCE = 0.03  # identity candidates: the same code must time the same


def identity_summary(name: str, result: dict[str, object]) -> str:
    """For identity candidates (`--sample`): every one must be correct and time within
    ±3% of eager; names the tasks that were not."""
    lines = result["lines"]
    ratios = sorted(x["speedup_vs_eager"] for x in lines if x.get("speedup_vs_eager"))
    wrong = [x["task"] for x in lines if not x.get("correct")]
    off = [f"{x['task']} {x['speedup_vs_eager']:.3f}x" for x in lines
           if x.get("speedup_vs_eager") and abs(x["speedup_vs_eager"] - 1) > IDENTITY_TOLERANCE]
    spread = (f"{ratios[0]:.3f}-{ratios[-1]:.3f}x, median {ratios[len(ratios) // 2]:.3f}x"
              if ratios else "no ratios")
    again = sum(1 for x in lines if x.get("infra_errors"))
    text = (f"{name}: {len(lines) - len(wrong)}/{len(lines)} correct, vs eager {spread}, "
            f"{len(off)} outside ±{IDENTITY_TOLERANCE:.0%}, {again} judged again")
    return "\n    ".join([text] + [f"not correct: {t}" for t in wrong] + off)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--skip-big", action="store_true", help=f"leave out {', '.join(BIG)}")
    parser.add_argument("--no-check", action="store_true", help="skip the one-by-one checks")
    parser.add_argument("--save", type=Path, help="copy each run's results.jsonl here")
    parser.add_argument("--sample", type=Path, help="a kernelbench_sample.py folder: real "
                        "KernelBench tasks with identity candidates instead of ours")
    parser.add_argument("--cold-only", action="store_true",
                        help="skip the warm re-run (a larger sample within one time limit)")
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"),
                        help="cpu: CPU tasks on one CPU slot (the bench's own overhead)")
    parser.add_argument("--lookahead", default="", help="comma-separated jobs-ahead values: "
                        "one cold 1-GPU bench each (default: one, the executor's default)")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwind: stop what runs
    import torch

    count = torch.cuda.device_count() if args.device == "cuda" else 1
    if not count:
        sys.exit("needs a CUDA device (or --device cpu)")
    with tempfile.TemporaryDirectory(prefix="cudaopt-bench-tp-") as tmp:
        root, sample = Path(tmp), args.sample is not None
        if sample:
            os.environ["CUDAOPT_ALLOW"] = "*"  # identity candidates run the task's operators
            task_files = sorted(args.sample.resolve().glob("level*/*.py"))
            cands = args.sample.resolve() / "candidates"
            found = [(t, cands / t.parent.name / t.stem) for t in task_files]
        else:
            found = tasks(args.skip_big) if args.device == "cuda" else cpu_tasks(root)
            task_files, cands = lay_out(found, root)
        first = "0" if args.device == "cuda" else None
        one = "1 GPU" if args.device == "cuda" else "1 CPU"
        aheads = [int(x) for x in args.lookahead.split(",")] if args.lookahead else [None]
        results = {}
        for i, ahead in enumerate(aheads):  # the first's caches serve the warm re-run
            tag, n = ("" if ahead is None else f", ahead {ahead}"), "" if i == 0 else f"-{i}"
            results[f"bench, {one}, cold{tag}"] = run_bench(
                task_files, cands, root / f"b1{n}", root / f"w1{n}", root / f"c1{n}", first,
                sample, ahead, args.save)
        gpus, last = first, "1"
        if count >= 2:
            gpus, last = "0,1", "2"
            results["bench, 2 GPUs, cold"] = run_bench(task_files, cands, root / "b2",
                                                       root / "w2", root / "c2", gpus, sample,
                                                       save=args.save)
        label = f"bench, {one if last == '1' else '2 GPUs'}, warm"
        if not args.cold_only:
            results[label] = run_bench(task_files, cands, root / "b3", root / f"w{last}",
                                       root / f"c{last}", gpus, sample, aheads[0], args.save)
        if not args.no_check:
            results["check 1 by 1, cold"] = run_checks(found, root, root / "c4", args.device)
        if args.save and "check 1 by 1, cold" in results:  # the benches saved their own
            (args.save / "check-1by1.jsonl").write_text(
                "".join(json.dumps(x) + "\n" for x in results["check 1 by 1, cold"]["lines"]))
        name = torch.cuda.get_device_name(0) if args.device == "cuda" else "CPU slot"
        print(f"\ncandidate-mode throughput: {len(found)} tasks, {count} x {name}, torch "
              f"{torch.__version__}")
        print(f"{'run':<21}{'tasks':>6}{'slots':>6}{'wall s':>8}{'/slot-min':>10}{'correct':>10}"
              f"{'s/task':>8}")
        print("-" * 69)
        rates = {}
        for label, result in results.items():
            text, rate = row(label, result)
            rates[label] = rate
            print(text)
        print("\nwhere a task's time goes: mean seconds per task (the verdicts' phases_s)")
        print(f"{'run':<13}" + "".join(f"{p[:5]:>6}" for p in PHASES) + f"{'ahead':>6}"
              f"{'queue':>6}")
        print("-" * 73)
        for label, result in results.items():
            print(phases(label, result))
        print("ahead = kernels/ built on the CPU pool before a slot took the task; "
              "lock = waiting for the device")
        if args.sample:
            print("\nidentity candidates (each must be correct, within ±3% of eager):")
            for label, result in results.items():
                print("  " + identity_summary(label, result))
        if "bench, 2 GPUs, cold" in rates:
            total = rates["bench, 2 GPUs, cold"] * 2 / rates[f"bench, {one}, cold"]
            print(f"scaling 1 -> 2 GPUs (cold): {total:.2f}x the tasks per minute (ideal 2.00x)")
        if "check 1 by 1, cold" in results:
            ratio = results[f"bench, {one}, cold"]["wall_s"] / \
                results["check 1 by 1, cold"]["wall_s"]
            print(f"bench on {one} vs check one by one: {ratio:.2f}x the wall time "
                  f"(below 1: bench is faster)")


if __name__ == "__main__":
    main()
