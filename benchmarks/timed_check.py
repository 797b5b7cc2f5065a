"""One `cudaopt check` run as a command and timed from outside, as the benchmarks print it."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path


def timed_check(workspace: Path, device: str, env: dict[str, str],
                *flags: str) -> tuple[dict[str, object], subprocess.CompletedProcess]:
    """Wall time of the whole command and the verdict's own split; exits when no verdict came."""
    verdict_path = workspace / "verdict.json"
    verdict_path.unlink(missing_ok=True)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "cudaopt.cli", "check", "model.py", "model_new.py",
         "--device", device, "--json", str(verdict_path), *flags],
        cwd=workspace, env=env, capture_output=True, text=True)
    wall_s = time.perf_counter() - start
    if not verdict_path.exists():
        sys.exit(f"check gave no verdict ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    v = json.loads(verdict_path.read_text())
    return {"wall_s": wall_s, "status": v["status"], "build_s": v["build_s"] or 0.0,
            "verify_s": v["verify_s"] or 0.0, "profile_s": v["profile_s"] or 0.0,
            "vs_eager": v["speedup_vs_eager"] or 0.0,
            "vs_compile": v["speedup_vs_compile"] or 0.0}, proc
