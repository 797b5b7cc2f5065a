"""The filters that need the task to run, in a child process with a time limit (see
`probe`): a crash or a hang rejects the task at the filter it was in. On a GPU the child
runs under the GPU's host-wide lock, the one judges time under, taken before its time
limit starts: a synth beside a bench would otherwise land its kernels inside the bench's
timed calls, and the bench's inside synth's eager window."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cudaopt.judge import gpu_identity, gpu_lock

#: Every status a tried composition can end with, in the order the filters run.
FILTERS = ("typechecks", "similarity", "runs_eager", "finite", "deterministic",
           "input_dependent", "eager_window", "runs_compiled", "agrees")


@dataclass
class Outcome:
    status: str  # "kept" or the filter that rejected the task
    eager_ms: float | None = None
    compile_ms: float | None = None
    shapes: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


def evaluate(task: Path, device: str, window_ms: tuple[float, float],
             timeout_s: float) -> Outcome:
    result, log = task.with_suffix(".json"), task.with_suffix(".log")
    argv = [sys.executable, "-m", "cudaopt.synth.probe", str(task), str(result), device,
            repr(window_ms[0]), repr(window_ms[1])]
    with _gpu_held(device), open(log, "wb") as out:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            code = proc.wait(timeout_s)
            error = None if code == 0 else f"the process died (exit {code})"
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            error = f"no result within {timeout_s:g} s (killed)"
        except BaseException:  # Ctrl-C: the task's processes go with the run
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
    state = json.loads(result.read_text()) if result.is_file() else {}
    status = state.get("status") if error is None else None
    if error and log.is_file():
        error += ": " + log.read_text(errors="replace")[-500:].strip()
    return Outcome(status or state.get("phase") or "runs_eager", state.get("eager_ms"),
                   state.get("compile_ms"), state.get("shapes", {}),
                   error or state.get("error"))


def _gpu_held(device: str) -> contextlib.AbstractContextManager[Any]:
    if not device.startswith("cuda"):
        return contextlib.nullcontext()
    index = device.partition(":")[2]
    return gpu_lock(gpu_identity(int(index) if index else 0))
