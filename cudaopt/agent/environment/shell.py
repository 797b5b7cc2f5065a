"""The agent's shell: one command at a time, in the workspace, with a time limit and an
output cap, so a runaway command becomes a message to the model instead of a stuck run.

`LocalShell` is the seam for sandboxing: given a `cudaopt.sandbox.Sandbox`, every command
runs through `Sandbox.run` (bwrap, scrubbed environment, resource bounds) instead.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Protocol

from cudaopt.sandbox import Sandbox, ShellResult


class Shell(Protocol):
    def run(self, command: str, cwd: Path) -> ShellResult: ...


def truncate(text: str, limit_chars: int) -> str:
    """Keep the head and the tail: errors show up at the end, context at the start."""
    if len(text) <= limit_chars:
        return text
    head = limit_chars // 4
    tail = limit_chars - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n[... {cut} characters cut ...]\n{text[-tail:]}"


class LocalShell:
    """Runs `bash -c` in its own process group, killed whole when the time limit hits."""

    def __init__(
        self,
        env: dict[str, str],
        timeout_s: float = 600.0,
        output_limit_chars: int = 12_000,
        sandbox: Sandbox | None = None,
    ) -> None:
        self.env = env
        self.timeout_s = timeout_s
        self.output_limit_chars = output_limit_chars
        self.sandbox = sandbox

    def run(self, command: str, cwd: Path) -> ShellResult:
        if self.sandbox is not None:
            return self.sandbox.run(command, cwd, self.env, self.timeout_s, self.output_limit_chars)
        start = time.monotonic()
        proc = subprocess.Popen(
            ["bash", "-c", command],
            cwd=cwd,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            raw, _ = proc.communicate(timeout=self.timeout_s)
            timed_out = False
        except subprocess.TimeoutExpired:
            _kill_group(proc.pid)
            raw = _drain(proc)
            timed_out = True
        except KeyboardInterrupt:
            _kill_group(proc.pid)
            proc.wait()
            raise
        output = truncate(raw.decode(errors="replace"), self.output_limit_chars)
        code = None if timed_out else proc.returncode
        return ShellResult(code, output, time.monotonic() - start, timed_out)


def _drain(proc: subprocess.Popen) -> bytes:
    """What a killed command printed; a grandchild that left the group may hold the pipe."""
    try:
        raw, _ = proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        raw = b""
    return raw


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
