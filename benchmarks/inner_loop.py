"""Inner-loop latency: from editing one kernel source to a finished verify + profile.

    python benchmarks/inner_loop.py [--device cuda|cpu] [--edits 2]

Copies a shipped example into a fresh workspace with a fresh cache and times `cudaopt check`
as a command, twice over:

- standalone: every command starts its own workers (what a user's one-off check costs);
  the first run is cold (binding, kernel and torch.compile baseline all built from scratch);
- through a warm judge server, as inside `cudaopt optimize`: the model's `cudaopt profile`
  reaches the run's pool, whose reference workers stay loaded and compiled.

Each later row edits the kernel source first, as an agent does on every iteration. Printed:
wall time of the whole command and the judge's own build / verify / profile split.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from timed_check import timed_check  # noqa: E402

from cudaopt.judge import JudgeOptions, JudgePool, JudgeServer, worker_env  # noqa: E402


def run_check(workspace: Path, device: str, env: dict[str, str]) -> dict[str, object]:
    result, proc = timed_check(workspace, device, env)
    if proc.returncode != 0:
        sys.exit(f"check failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return result


def edit(kernel: Path, n: int) -> None:
    kernel.write_text(kernel.read_text() + f"\n// edit {n}\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--edits", type=int, default=2)
    args = parser.parse_args()
    cuda = args.device == "cuda"
    example = ROOT / "examples" / ("fused_swish_cuda" if cuda else "fused_swish_cpu")
    source = "fused_swish.cu" if cuda else "fused_swish.cpp"
    rows = []
    with tempfile.TemporaryDirectory(prefix="cudaopt-bench-") as tmp:
        workspace = Path(tmp) / "ws"
        shutil.copytree(example, workspace, ignore=shutil.ignore_patterns(".cudaopt"))
        env = {**os.environ, "XDG_CACHE_HOME": str(Path(tmp) / "cache"),
               "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        kernel = workspace / "kernels" / source
        rows.append(("standalone cold", run_check(workspace, args.device, env)))
        for i in range(args.edits):
            edit(kernel, i)
            rows.append((f"standalone edit {i + 1}", run_check(workspace, args.device, env)))
        os.environ["XDG_CACHE_HOME"] = env["XDG_CACHE_HOME"]
        options = JudgeOptions(device=args.device)
        pool = JudgePool(worker_env(options))
        server = JudgeServer(Path(tmp) / "judge.sock", pool, workspace, options)
        server.start()
        served = {**env, "CUDAOPT_JUDGE_SOCKET": str(Path(tmp) / "judge.sock")}
        try:
            rows.append(("server first", run_check(workspace, args.device, served)))
            for i in range(args.edits):
                edit(kernel, 100 + i)
                rows.append((f"server edit {i + 1}", run_check(workspace, args.device, served)))
        finally:
            server.close()
            pool.close()
    print(f"{'run':<18}{'wall s':>8}{'build s':>9}{'verify s':>10}{'profile s':>11}"
          f"{'vs compile':>12}")
    for name, r in rows:
        print(f"{name:<18}{r['wall_s']:>8.2f}{r['build_s']:>9.2f}{r['verify_s']:>10.2f}"
              f"{r['profile_s']:>11.2f}{r['vs_compile']:>11.2f}x")


if __name__ == "__main__":
    main()
