"""The parent's handle on one slot process (`executor.slot`): it starts the process pinned to
its GPU and its timing CPU, sends it jobs and the lane messages (PRESTART, RELEASE), and
closes it, from whichever lane's thread gets there first."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from pathlib import Path

from cudaopt.executor.base import SlotSpec
from cudaopt.executor.jobs import Job, JobResult
from cudaopt.executor.slot import PRESTART, RELEASE
from cudaopt.judge import JudgeOptions, gpu_identity

#: How long a lane's process may take to close its judge workers: a pair lent to the
#: machine's judge first says what device memory it holds (`JudgePool.release`, up to 60 s).
RELEASE_S = 90.0


class SlotProcess:
    """One slot's process and the pipe to it."""

    def __init__(self, spec: SlotSpec, root: Path, sandbox: str, plugins: tuple[str, ...],
                 timing_cpus: dict[str, int], build_env: dict[str, str]):
        self.spec = spec
        ours, theirs = socket.socketpair()
        env = {**os.environ, **build_env}
        if spec.gpu is not None:  # the parent's cuda:N, as the host names it
            env["CUDA_VISIBLE_DEVICES"] = gpu_identity(spec.gpu)
        if spec.name in timing_cpus:
            from cudaopt.judge import pinning

            env[pinning.TIMING_CPU_ENV] = str(timing_cpus[spec.name])
            env[pinning.RESERVED_ENV] = ",".join(map(str, sorted(timing_cpus.values())))
        argv = [sys.executable, "-m", "cudaopt.executor", str(theirs.fileno()), spec.name,
                spec.device, "-" if spec.gpu is None else str(spec.gpu), str(root), sandbox,
                *plugins]
        self.proc = subprocess.Popen(argv, env=env, pass_fds=(theirs.fileno(),),
                                     start_new_session=True, stdin=subprocess.DEVNULL)
        theirs.close()
        self.conn = Connection(ours.detach())
        self._closing, self._closed = threading.Lock(), False

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def run(self, job: Job, timeout_s: float) -> JobResult:
        try:
            self.conn.send(job)
            if not self.conn.poll(timeout_s):
                return JobResult(job.id, infra_error=f"slot {self.spec.name} gave no answer "
                                 f"within {timeout_s:.0f} s (killed)", slot=self.spec.name)
            return self.conn.recv()
        except (EOFError, OSError) as exc:
            code = self.proc.poll()
            return JobResult(job.id, slot=self.spec.name, infra_error=(
                f"slot {self.spec.name} process died (exit code {code}): {exc or 'EOF'}"))

    def terminate(self, grace_s: float = 10.0) -> None:
        """SIGTERM lets the slot close its judge workers; SIGKILL after `grace_s`."""
        try:
            self.proc.terminate()
            self.proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, 9)
        except ProcessLookupError:
            pass

    def prestart(self, options: JudgeOptions) -> None:
        """See `slot.PRESTART`: no answer comes back, so the lane does not wait."""
        self.conn.send((PRESTART, options))

    def release(self, timeout_s: float = RELEASE_S) -> None:
        """Its loaded judge workers let go, the process kept (see `slot.RELEASE`); one that
        does not answer in time, or is gone, is closed instead. Called by another lane's
        thread while this one is idle (`LocalExecutor._close_beside`)."""
        with self._closing:
            if self._closed:
                return
            try:
                self.conn.send(RELEASE)
                if self.conn.poll(timeout_s) and self.conn.recv() == RELEASE:
                    return
            except (EOFError, OSError):
                pass
        self.close()

    def close(self) -> None:
        """Idempotent, and safe from two threads: a lane working alone may be releasing an
        idle sibling (`release`) while that sibling's own thread closes it."""
        with self._closing:
            if self._closed:
                return
            self._closed = True
        try:
            self.conn.send(None)
        except OSError:
            pass
        self.conn.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, 9)
            self.proc.wait()
