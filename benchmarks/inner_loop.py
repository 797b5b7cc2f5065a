"""Inner-loop latency: from editing one kernel source to a finished verify + profile.

    python benchmarks/inner_loop.py [--device cuda|cpu] [--edits 3]

Copies a shipped example into a fresh workspace with a fresh cache, runs `cudaopt check`
once cold (binding, kernel and torch.compile baseline all built from scratch), then edits
the kernel source and re-runs it, as an agent does on every iteration. Prints one row per
run: wall time of the whole command and the judge's own build / verify / profile split.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_check(workspace: Path, device: str, env: dict[str, str]) -> dict[str, float]:
    verdict_path = workspace / "verdict.json"
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "cudaopt.cli", "check", "model.py", "model_new.py",
         "--device", device, "--json", str(verdict_path)],
        cwd=workspace, env=env, capture_output=True, text=True)
    wall_s = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"check failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    v = json.loads(verdict_path.read_text())
    return {"wall_s": wall_s, "build_s": v["build_s"] or 0.0, "verify_s": v["verify_s"] or 0.0,
            "profile_s": v["profile_s"] or 0.0, "speedup_vs_compile": v["speedup_vs_compile"]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--edits", type=int, default=3)
    args = parser.parse_args()
    example = ROOT / "examples" / ("fused_swish_cuda" if args.device == "cuda"
                                   else "fused_swish_cpu")
    source = "fused_swish.cu" if args.device == "cuda" else "fused_swish.cpp"
    with tempfile.TemporaryDirectory(prefix="cudaopt-bench-") as tmp:
        workspace = Path(tmp) / "ws"
        shutil.copytree(example, workspace, ignore=shutil.ignore_patterns(".cudaopt"))
        env = {**os.environ, "XDG_CACHE_HOME": str(Path(tmp) / "cache")}
        rows = [("cold", run_check(workspace, args.device, env))]
        kernel = workspace / "kernels" / source
        for i in range(args.edits):
            kernel.write_text(kernel.read_text() + f"\n// edit {i}\n")
            rows.append((f"warm edit {i + 1}", run_check(workspace, args.device, env)))
    print(f"{'run':<14}{'wall s':>8}{'build s':>9}{'verify s':>10}{'profile s':>11}"
          f"{'vs compile':>12}")
    for name, r in rows:
        print(f"{name:<14}{r['wall_s']:>8.2f}{r['build_s']:>9.2f}{r['verify_s']:>10.2f}"
              f"{r['profile_s']:>11.2f}{r['speedup_vs_compile']:>11.2f}x")


if __name__ == "__main__":
    main()
