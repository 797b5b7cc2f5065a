"""A worker process that this judge process did not start, watched through a pidfd: one
handed over by another judge process (`lending`) or forked by the template (`template`)."""

from __future__ import annotations

import os
import select
import subprocess


class Adopted:
    """Stands in for the `Popen` of a worker that another process started (a judge that
    handed it over, the template that forked it): only its parent can read its exit
    status, so a pidfd says whether it lives."""

    def __init__(self, pid: int, pidfd: int):
        self.pid = pid
        self.pidfd: int | None = pidfd  # None once handed on: no longer ours to watch
        self.returncode: int | None = None
        self.exited = False

    def poll(self) -> int | None:
        """None while it runs; once it has exited, its status where this process can read
        it (it is our own child), else 0."""
        if self.pidfd is None:
            return 0
        if not self.exited and select.select([self.pidfd], [], [], 0)[0]:
            self._exited()
        return None if not self.exited else (self.returncode or 0)

    def wait(self, timeout: float | None = None) -> int | None:
        if not self.exited and self.pidfd is not None:
            if not select.select([self.pidfd], [], [], timeout)[0]:
                raise subprocess.TimeoutExpired(f"pid {self.pid}", timeout or 0.0)
            self._exited()
        return self.returncode

    def _exited(self) -> None:
        self.exited = True
        try:
            _, status = os.waitpid(self.pid, os.WNOHANG)
            self.returncode = os.waitstatus_to_exitcode(status)
        except ChildProcessError:
            pass  # another process's child: its status is not ours to read
