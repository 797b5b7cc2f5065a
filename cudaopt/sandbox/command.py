"""Run one command under a time limit and an output cap, reading its output as it comes.

Reading as it comes (instead of `communicate`) keeps memory bounded whatever the command
prints, and lets the runner stop a command that floods its output or, as root, starts too
many processes. Whatever stops it, the whole process group is killed: in a bwrap sandbox
that kills bwrap, whose `--die-with-parent` takes the sandbox's pid namespace (every
process the command started) down with it. Background processes never outlive a command.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cudaopt.sandbox.limits import ProcessCounter

POLL_S = 0.05
CHUNK = 1 << 16
GRACE_S = 2.0  # output still arriving after the command exited (none mode: orphans)
STOP_S = 5.0  # for a killed sandbox to be torn down
KILLED = 128 + signal.SIGKILL


@dataclass
class Outcome:
    exit_code: int | None  # None when the time limit killed it
    output: str  # head and tail, at most `output_limit_chars` plus a cut marker
    elapsed_s: float
    timed_out: bool = False
    killed_for: str | None = None  # "output" or "processes" when a bound killed it


class _Capture:
    """The head and the tail of a stream and its size, in bounded memory."""

    def __init__(self, keep_bytes: int) -> None:
        self.keep = keep_bytes
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.keep - len(self.head)
        self.head += chunk[:room]
        self.tail += chunk[max(room, 0):]
        if len(self.tail) > 2 * self.keep:
            cut = len(self.tail) - self.keep
            del self.tail[:cut]
            self.dropped += cut

    def text(self, limit_chars: int) -> str:
        """Head and tail kept: errors show up at the end, context at the start."""
        whole = (self.head + self.tail).decode(errors="replace")
        if not self.dropped and len(whole) <= limit_chars:
            return whole
        head = self.head.decode(errors="replace")[: limit_chars // 4]
        tail = (self.head + self.tail).decode(errors="replace")[-(limit_chars - len(head)):]
        cut = self.total - len(head.encode()) - len(tail.encode())
        return f"{head}\n[... {cut} bytes cut ...]\n{tail}"


def run_command(argv: list[str], cwd: Path, env: dict[str, str], timeout_s: float,
                output_limit_chars: int, max_output_bytes: int,
                watch: Callable[[int], ProcessCounter] | None = None) -> Outcome:
    """Run `argv` in its own session; `watch(pid)` returns a counter polled for too many
    processes. Ctrl-C kills the command and propagates."""
    start = time.monotonic()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    capture = _Capture(4 * output_limit_chars)
    try:
        reason = _pump(proc, capture, start + timeout_s, max_output_bytes,
                       watch(proc.pid) if watch else None)
    finally:  # on Ctrl-C too; also what the command left running in the background
        _stop(proc)
        assert proc.stdout is not None
        proc.stdout.close()
    code = None if reason == "timeout" else KILLED if reason else proc.returncode
    return Outcome(code, capture.text(output_limit_chars), time.monotonic() - start,
                   reason == "timeout", reason if reason != "timeout" else None)


def _pump(proc: subprocess.Popen, capture: _Capture, deadline: float, max_output: int,
          counter: ProcessCounter | None) -> str | None:
    """Read until the command is done; returns why it must be killed, or None."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    eof = False
    done_by: float | None = None
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            now = time.monotonic()
            if proc.poll() is not None:
                done_by = done_by or now + GRACE_S
                if eof or now >= done_by:
                    return None
            if now >= deadline:
                return "timeout"
            wait = min(POLL_S, deadline - now)
            if eof:  # output closed; the command itself may still be running
                time.sleep(wait)
            elif selector.select(wait):
                chunk = os.read(fd, CHUNK)
                eof = not chunk
                capture.add(chunk)
                if capture.total > max_output:
                    return "output"
            if counter is not None and counter.over():
                return "processes"


def _stop(proc: subprocess.Popen) -> None:
    """Kill the command and return only once all of it is gone. The direct children go
    first: for bwrap that is the sandbox's init, whose exit the kernel holds back until
    every process of its pid namespace is dead, and bwrap exits once it has reaped it
    (killing bwrap alone would leave that teardown running after we return)."""
    for child in _children(proc.pid):
        _kill(os.kill, child)
    try:
        proc.wait(timeout=STOP_S)
    except subprocess.TimeoutExpired:
        pass
    _kill(os.killpg, proc.pid)
    proc.wait()


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        return []


def _kill(send: Callable[[int, int], None], target: int) -> None:
    try:
        send(target, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
