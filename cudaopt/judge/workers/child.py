"""A worker child process and the side channel to it.

Candidate code only ever runs in such a child, started in its own process session so a
timeout kills everything it spawned. A segfault, an illegal memory access, a hang or an
exception becomes a `WorkerFailure` that the judge turns into a verdict.
"""

from __future__ import annotations

import json
import os
import select
import signal
import site
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from cudaopt.judge.workers import spawner, template
from cudaopt.judge.workers.adopted import Adopted

#: Confines a worker (e.g. in a sandbox): gets its argv and environment, returns new ones.
Wrap = Callable[[list[str], dict[str, str]], tuple[list[str], dict[str, str]]]


#: In a worker's environment: warm up before the first message ("compile": the baseline
#: worker imports torch.compile's machinery; see `building.caches.prewarm_compile`).
PREWARM_ENV = "CUDAOPT_PREWARM"
#: In a worker's environment: when its parent started it (epoch seconds), so the worker can
#: say what its start-up cost (`boot` in the verdict's sub-phases).
SPAWNED_ENV = "CUDAOPT_SPAWNED_AT"
#: In a candidate worker's environment: its judgement runs on CUDA, so it creates its CUDA
#: context while it waits for its first message (see `roles.worker.ready_cuda`).
CUDA_AHEAD_ENV = "CUDAOPT_CUDA_AHEAD"
#: The folder holding the `cudaopt` package the judge runs from.
PACKAGE_PARENT = str(Path(__file__).resolve().parents[3])


def python_path(env: dict[str, str]) -> str:
    """The worker imports the judge's own cudaopt: it runs in another folder (a sandbox's
    workspace), where `-m` would not find a cudaopt run from its checkout. An installed one
    is found without help, and its site folder must not go ahead of the standard library."""
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if PACKAGE_PARENT not in paths and PACKAGE_PARENT not in _site_dirs():
        paths.insert(0, PACKAGE_PARENT)
    return os.pathsep.join(paths)


def _site_dirs() -> list[str]:
    return [*site.getsitepackages(), site.getusersitepackages()]


class WorkerFailure(Exception):
    """The worker died, hung, or answered with an error."""

    def __init__(self, kind: str, message: str, reply: dict[str, Any] | None = None):
        super().__init__(message)
        self.kind = kind  # "crash" | "timeout" | an error kind from the worker's reply
        self.reply = reply or {}


def _hostile(reply: Any) -> None:
    """A candidate's reply is whatever its code chose to send (it can rewrite its worker):
    the fields every step reads must have their types, or the reply is the candidate's
    crash, not the judge's."""
    if not isinstance(reply, dict):
        raise WorkerFailure("crash", f"the candidate's worker replied {str(reply)[:80]!r}")
    found = reply.get("violations", [])
    if not isinstance(found, list) or not all(isinstance(v, str) for v in found):
        raise WorkerFailure("crash", "the candidate's worker sent malformed violations")
    for key in ("ms", "host_ms"):
        value = reply.get(key, 0.0)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                0 <= value < float("inf")):
            raise WorkerFailure("crash", f"the candidate's worker sent a malformed {key}")


def _death(code: int | None, wrapped: bool) -> str:
    """A sandbox (bwrap) reports its child's death by signal N as exit code 128+N, as a
    shell does; the verdict names the signal either way, so a segfault reads the same
    isolated or not. None: a process another one started (a judge that handed it over,
    the template it was forked from), whose status only that one can read."""
    if code is None:
        return "exited (its status went to the process that started it)"
    number = -code if code is not None and code < 0 else 0
    if wrapped and code is not None and code > 128:
        number = code - 128
    try:
        return f"killed by signal {signal.Signals(number).name}" if number else (
            f"exited with code {code}")
    except ValueError:
        return f"exited with code {code}"


class Worker:
    def __init__(self, role: str, log_path: Path, env: dict[str, str],
                 wrap: Wrap | None = None, fork: bool = False):
        """With `fork`, a trusted ("reference") worker is forked from the judge's warm
        template where one is ready (`template`: one starts for later workers when there is
        none); a candidate always starts as a new process, `wrap`ped in its confinement."""
        self.role = role
        self.log_path = log_path
        self.pending = 0  # messages sent whose reply has not been read: a reused worker needs 0
        # torch.profiler ran in it on CUDA: it launches slower ever after (1.22-1.29x on an
        # H200), so a pool never times it again (`JudgePool._swap`)
        self.profiled = False
        # an isolated candidate's compiled artefacts, per kind ("builds": `load_inline`,
        # "triton"): (the judge's folder, the worker's own); see `extdir.seed_build`
        self.caches: dict[str, tuple[Path, Path]] = {}
        read_fd, write_fd = os.pipe()
        self._log = open(log_path, "w+b")  # read back through the same descriptor
        self.spawned_at = time.time()  # with the worker's `boot`, when it was ready
        full_env = {**os.environ, **env, "CUDAOPT_REPLY_FD": str(write_fd),
                    "PYTHONUNBUFFERED": "1", SPAWNED_ENV: repr(self.spawned_at),
                    "PYTHONPATH": python_path({**os.environ, **env})}
        self.proc: Any  # a `Popen`, or an `Adopted`: forked, or handed over
        trusted = role == "reference" and wrap is None  # a confined worker is never forked
        forked = self._fork(full_env, write_fd) if fork and trusted else None
        if forked is not None:
            self.proc, self._commands = forked
        else:
            argv = [sys.executable, "-m", "cudaopt.judge.roles.worker", role]
            if wrap is not None:
                argv, full_env = wrap(argv, full_env)
            self.proc = spawner.popen(
                argv,
                stdin=subprocess.PIPE, stdout=self._log, stderr=subprocess.STDOUT,
                pass_fds=(write_fd,), env=full_env, start_new_session=True,
            )
            assert self.proc.stdin is not None  # stdin=PIPE: typeshed cannot tell
            self._commands = self.proc.stdin
        os.close(write_fd)
        self._reply = os.fdopen(read_fd, "rb")
        self._buffer = b""
        self._wrapped = wrap is not None

    def _fork(self, env: dict[str, str], reply_fd: int) -> tuple[Adopted, IO[bytes]] | None:
        """The process forked from the template and the write end of its command pipe, or
        None where no template is ready."""
        commands_read, commands_write = os.pipe()
        try:
            forked = template.fork_reference(
                env, (commands_read, reply_fd, self._log.fileno()))
        finally:
            os.close(commands_read)
        if forked is None:
            os.close(commands_write)
            return None
        return forked, os.fdopen(commands_write, "wb")

    @classmethod
    def adopt(cls, role: str, proc: Any, commands: int, reply: int, log: int,
              buffer: bytes = b"") -> Worker:
        """A worker another judge process started and handed over (see `lending`): `proc`
        stands in for its `Popen`, the descriptors are its pipes and its log."""
        worker = cls.__new__(cls)
        worker.role, worker.proc, worker.pending, worker.profiled = role, proc, 0, False
        worker.caches, worker.spawned_at = {}, 0.0
        worker.log_path = Path(f"/proc/{proc.pid}/fd/1")
        worker._log = os.fdopen(log, "r+b")
        worker._commands = os.fdopen(commands, "wb")
        worker._reply = os.fdopen(reply, "rb")
        worker._buffer, worker._wrapped = buffer, False
        return worker

    def descriptors(self) -> tuple[int, int, int]:
        """Its command pipe, reply pipe and log, to hand it over to another process."""
        return self._commands.fileno(), self._reply.fileno(), self._log.fileno()

    @property
    def pidfd(self) -> int | None:
        """The pidfd a forked or handed-over worker is watched by (`Adopted`); None for one
        this process started itself."""
        return getattr(self.proc, "pidfd", None)

    @property
    def buffered(self) -> bytes:
        """Reply bytes read from the pipe but not yet taken: they travel with a handover."""
        return self._buffer

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def send(self, op: str, **args: Any) -> None:
        self.pending += 1
        try:
            self._commands.write((json.dumps({"op": op, **args}) + "\n").encode())
            self._commands.flush()
        except (BrokenPipeError, OSError):
            pass  # the read that follows reports how the worker died

    def receive(self, timeout_s: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                raise WorkerFailure("timeout", f"no answer within {timeout_s:.0f} s (killed)")
            ready, _, _ = select.select([self._reply], [], [], min(left, 1.0))
            if ready:
                chunk = os.read(self._reply.fileno(), 1 << 16)
                if not chunk:
                    raise WorkerFailure("crash", self._death_message())
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        self.pending -= 1
        try:
            reply = json.loads(line)
        except json.JSONDecodeError as exc:
            raise WorkerFailure("crash", f"garbled reply from worker: {line[:200]!r}") from exc
        if self.role == "candidate":
            _hostile(reply)
        if not reply.get("ok", False):
            raise WorkerFailure(reply.get("kind", "error"), reply.get("error", "?"), reply)
        return reply

    def call(self, op: str, timeout_s: float, **args: Any) -> dict[str, Any]:
        self.send(op, **args)
        return self.receive(timeout_s)

    def _death_message(self) -> str:
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.proc.returncode
        return f"worker process {_death(code, self._wrapped)}\n{self.log_tail()}"

    def log_tail(self, limit: int = 4000) -> str:
        """Through the descriptor the worker writes to: a worker handed over by another
        process may log to a file that process has since removed."""
        try:
            fd = self._log.fileno()
            size = os.fstat(fd).st_size
            data = os.pread(fd, 4 * limit, max(0, size - 4 * limit))
        except (OSError, ValueError):
            return ""
        return data.decode(errors="replace")[-limit:]

    def kill(self) -> None:
        """The worker's process group, and the worker itself: one just forked may not have
        made its group yet (`roles.template`)."""
        if self.proc.poll() is None:
            for kill in (os.killpg, os.kill):
                try:
                    kill(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self.proc.wait()

    def close(self) -> None:
        """Ask politely, then kill: an exit handler in candidate code must not hang the judge.
        A reference process still busy with a command (a baseline's compile, a load) is
        killed at once: it never imported candidate code, and its exit would wait for the
        command, up to 5 s (a reward-service episode that ended while its baseline compiled
        answered its last step after 5.03 s on an H100)."""
        if self.proc.poll() is None and not (self.role == "reference" and self.pending):
            self.send("exit")
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        self.discard()

    def discard(self) -> None:
        """Kill a process held in reserve (started ahead, or a reference kept for reuse): it
        never imported candidate code, so no exit handler deserves a turn, and asking one that
        is still importing torch to exit waits for the import (up to the 5 s of `close`)."""
        self.kill()
        self.release()

    def release(self) -> None:
        """Close this process's ends only: after a handover, the process lives on."""
        for end in (self._commands, self._reply, self._log):
            try:
                end.close()
            except OSError:
                pass
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.proc.pidfd = None
