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

#: Every status a tried composition can end with, in the order the filters run; `sizing`
#: and `building` reject a composition torch refused at every batch tried, or while it was
#: written out (see `steps`).
FILTERS = ("typechecks", "sizing", "building", "similarity", "runs_eager", "finite",
           "deterministic", "input_dependent", "eager_window", "runs_compiled", "agrees")


@dataclass
class Outcome:
    status: str  # "kept" or the filter that rejected the task
    eager_ms: float | None = None
    compile_ms: float | None = None
    shapes: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


class Prober:
    """Puts tasks through the running filters, one child process per task (a task may crash
    or hang its process). The next task's child is started while the current one runs, so
    its imports (torch, torch.compile's machinery: 13 s on an H200 host) are not paid
    between tasks; it takes no GPU lock and runs nothing on the device until its task comes."""

    def __init__(self, device: str, window_ms: tuple[float, float], timeout_s: float,
                 scratch: Path) -> None:
        self.device, self.window_ms, self.timeout_s = device, window_ms, timeout_s
        self.scratch = scratch
        self._spare: subprocess.Popen | None = None

    def __enter__(self) -> Prober:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self) -> subprocess.Popen:
        self.scratch.mkdir(parents=True, exist_ok=True)
        with open(self.scratch / "prober.log", "ab") as log:  # until its task names its own
            return subprocess.Popen([sys.executable, "-m", "cudaopt.synth.probe"],
                                    stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)

    def evaluate(self, task: Path) -> Outcome:
        result, log = task.with_suffix(".json"), task.with_suffix(".log")
        with _gpu_held(self.device):
            proc = self._spare if self._spare and self._spare.poll() is None else self._start()
            self._spare = self._start()
            error = self._wait(proc, {"task": str(task), "result": str(result),
                                      "log": str(log), "device": self.device,
                                      "window_ms": list(self.window_ms)})
        state = json.loads(result.read_text()) if result.is_file() else {}
        status = state.get("status") if error is None else None
        if error:
            said = log if log.is_file() else self.scratch / "prober.log"
            error += ": " + said.read_text(errors="replace")[-500:].strip()
        return Outcome(status or state.get("phase") or "runs_eager", state.get("eager_ms"),
                       state.get("compile_ms"), state.get("shapes", {}),
                       error or state.get("error"))

    def _wait(self, proc: subprocess.Popen, job: dict[str, Any]) -> str | None:
        """The task's time limit starts when it is handed over, the GPU's lock held."""
        try:
            assert proc.stdin is not None
            proc.stdin.write((json.dumps(job) + "\n").encode())
            proc.stdin.close()
            code = proc.wait(self.timeout_s)
            return None if code == 0 else f"the process died (exit {code})"
        except subprocess.TimeoutExpired:
            _kill(proc)
            return f"no result within {self.timeout_s:g} s (killed)"
        except BrokenPipeError:  # it died before its task came
            proc.wait()
            return f"the process died (exit {proc.returncode})"
        except BaseException:  # Ctrl-C: the task's processes go with the run
            _kill(proc)
            raise

    def close(self) -> None:
        if self._spare is not None:
            _kill(self._spare)
            self._spare = None


def _kill(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _gpu_held(device: str) -> contextlib.AbstractContextManager[Any]:
    if not device.startswith("cuda"):
        return contextlib.nullcontext()
    index = device.partition(":")[2]
    return gpu_lock(gpu_identity(int(index) if index else 0))
