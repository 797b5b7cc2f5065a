"""How fast `cudaopt synth` keeps tasks, and what each filter rejects.

    python benchmarks/synth_rate.py [--n 10] [--device cpu|cuda] [--eager-ms LO,HI]
                                    [--seed S] [--out DIR] [--identity] [--bench]

Runs `cudaopt synth` as a user would (a subprocess, wall clock around it, the catalogue of
the installed torch built first if not cached) into DIR (default: a new temporary folder),
then prints tasks kept per minute and the share of tries each filter rejected, from
DIR/manifest.jsonl. `--identity` writes each kept task's identity candidate (its own
`Model` renamed `ModelNew`) to DIR-identity/<task>/model_new.py; `--bench` then runs
`cudaopt bench DIR --candidates DIR-identity` (torch ops allowed, as identity candidates
need) and prints how many tasks were judged correct and whether the bench's eager times
lie inside the window.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cudaopt.synth.api import default_window, parse_window  # noqa: E402
from cudaopt.synth.evaluate import FILTERS  # noqa: E402


def cudaopt(*args: str, env: dict[str, str] | None = None) -> None:
    command = [sys.executable, "-m", "cudaopt.cli", *args]
    print("$", " ".join(command), flush=True)
    subprocess.run(command, check=True, cwd=ROOT, env={**os.environ, **(env or {})})


def rate(out: Path, seconds: float) -> list[dict]:
    lines = [json.loads(t) for t in (out / "manifest.jsonl").read_text().splitlines()]
    statuses = Counter(line["status"] for line in lines)
    kept = statuses.pop("kept", 0)
    print(f"\n{kept} kept of {len(lines)} tried in {seconds:.1f} s wall: "
          f"{kept / seconds * 60:.3f} tasks kept per minute")
    for name in FILTERS:
        print(f"  rejected by {name:16s} {statuses.get(name, 0):5d}  "
              f"{statuses.get(name, 0) / max(len(lines), 1):6.1%}")
    ops = Counter(len(line["ops"]) for line in lines if line["status"] == "kept")
    print("  kept by operator count:", dict(sorted(ops.items())))
    return [line for line in lines if line["status"] == "kept"]


def identity(out: Path, kept: list[dict]) -> Path:
    folder = out.with_name(out.name + "-identity")
    for line in kept:
        target = folder / line["name"] / "model_new.py"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(re.sub(r"\bModel\b", "ModelNew", (out / line["file"]).read_text()))
    print(f"identity candidates in {folder}")
    return folder


def bench(out: Path, candidates: Path, device: str, window: tuple[float, float]) -> None:
    bench_dir = out.with_name(out.name + "-bench")
    cudaopt("bench", str(out), "--candidates", str(candidates), "--device", device,
            "--out", str(bench_dir), env={"CUDAOPT_ALLOW": "*"})
    results = [json.loads(t) for t in (bench_dir / "results.jsonl").read_text().splitlines()]
    correct = sum(bool(r.get("correct")) for r in results)
    inside = [r for r in results if r.get("eager_ms") and window[0] <= r["eager_ms"] <= window[1]]
    print(f"\nbench: {correct} of {len(results)} judged correct; eager time inside "
          f"{window[0]:g}-{window[1]:g} ms for {len(inside)} of {len(results)}")
    for r in results:
        print(f"  {r['task']:50s} correct={r.get('correct')} eager_ms={r.get('eager_ms')}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=10)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--eager-ms", default=None)
    parser.add_argument("--seed", default="0")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--identity", action="store_true")
    parser.add_argument("--bench", action="store_true")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="synth-rate-")) / "tasks"
    if (out / "manifest.jsonl").exists():
        sys.exit(f"{out} already holds a manifest: the rate needs a new folder")
    window = parse_window(args.eager_ms) if args.eager_ms else default_window(args.device)
    started = time.perf_counter()
    cudaopt("synth", "--n", str(args.n), "--out", str(out), "--device", args.device,
            "--seed", args.seed, "--eager-ms", f"{window[0]:g},{window[1]:g}")
    kept = rate(out, time.perf_counter() - started)
    if args.identity or args.bench:
        candidates = identity(out, kept)
        if args.bench:
            bench(out, candidates, args.device, window)


if __name__ == "__main__":
    main()
