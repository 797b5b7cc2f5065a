"""Judgements served over a Unix socket from a warm `JudgePool`.

An agent run starts one so that `cudaopt verify` / `cudaopt profile`, run by the model in
its workspace, reuse warm workers instead of starting three Python processes each time:
the inner loop of every run. The socket path is private to the run; requests may only
name files inside the run's workspace, and may not choose seeds, caches or build folders.
"""

from __future__ import annotations

import json
import shutil
import socket
import tempfile
import threading
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import Any

from cudaopt.judge.serving.wire import socket_parent
from cudaopt.judge.verdict.options import JudgeOptions
from cudaopt.judge.verdict.verdict import Status, Verdict
from cudaopt.judge.workers.pool import JudgePool

#: How a request is judged: (task, candidate, options, progress) -> verdict.
Judge = Callable[[Path, Path, JudgeOptions, Callable[[str], None]], Verdict]

#: Options a client may set; the rest (seed, caches, build folder) stay the server's.
CLIENT_OPTIONS = ("device", "atol", "rtol", "trials", "allow", "timeout_s", "compile_mode",
                  "time_budget_s", "profile", "compile_baseline", "ceiling")


def options_to_wire(options: JudgeOptions) -> dict[str, Any]:
    return {name: getattr(options, name) for name in CLIENT_OPTIONS}


def options_from_wire(data: dict[str, Any], base: JudgeOptions) -> JudgeOptions:
    known = {f.name for f in fields(JudgeOptions)}
    values = {k: v for k, v in data.items() if k in CLIENT_OPTIONS and k in known}
    return JudgeOptions(**{**{f.name: getattr(base, f.name) for f in fields(base)}, **values})


class JudgeServer:
    """`socket_path=None`: a socket in a private temporary folder, removed on `close`
    (AF_UNIX paths are short, 108 bytes, so it cannot live beside a deep workspace).
    `judge`, given here, replaces the plain in-place `check` (an agent run judges a request
    the way its loop would, so that the loop need not judge the same candidate again)."""

    def __init__(self, socket_path: Path | None, pool: JudgePool, workspace: Path,
                 base: JudgeOptions | None = None, judge: Judge | None = None):
        self._private = None
        if socket_path is None:
            parent = socket_parent(len("cudaopt-judge-01234567/judge.sock"))
            self._private = Path(tempfile.mkdtemp(prefix="cudaopt-judge-", dir=parent))
            socket_path = self._private / "judge.sock"
        self.socket_path = socket_path
        self.pool = pool
        self.workspace = workspace.resolve()
        self.base = base or JudgeOptions()
        self.judge: Judge = judge or self.check_in_place
        self._sock: socket.socket | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self.socket_path.unlink(missing_ok=True)
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(str(self.socket_path))
        self.socket_path.chmod(0o600)
        self._sock.listen(4)
        self._thread = threading.Thread(target=self._accept, args=(self._sock,),
                                        name="cudaopt-judge", daemon=True)
        self._thread.start()

    def _accept(self, listener: socket.socket) -> None:
        """Takes the socket as an argument: `close` clears `self._sock` while this thread
        may be between two `accept`s, and the closed socket's OSError is what ends it."""
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return  # closed
            with conn:
                try:
                    self._serve(conn)
                except (OSError, ValueError):
                    continue  # the client went away or sent garbage: nothing to answer

    def _serve(self, conn: socket.socket) -> None:
        stream = conn.makefile("rwb")
        request = json.loads(stream.readline())

        def send(message: dict[str, Any]) -> None:
            stream.write((json.dumps(message) + "\n").encode())
            stream.flush()

        verdict = self._judge(request, lambda text: send({"progress": text}))
        send({"verdict": verdict.to_json()})

    def _judge(self, request: dict[str, Any], progress: Any) -> Verdict:
        task, candidate = Path(request["task"]).resolve(), Path(request["candidate"]).resolve()
        for path in (task, candidate):
            if not path.is_relative_to(self.workspace):
                return Verdict(status=Status.BAD_INPUT,
                               error=f"{path} is outside the workspace {self.workspace}")
        options = options_from_wire(request.get("options", {}), self.base)
        return self.judge(task, candidate, options, progress)

    def check_in_place(self, task: Path, candidate: Path, options: JudgeOptions,
                       progress: Callable[[str], None]) -> Verdict:
        from cudaopt.judge.api import check  # imports torch: not where a client only asks

        return check(task, candidate, options, progress, pool=self.pool)

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        self.socket_path.unlink(missing_ok=True)
        if self._private is not None:
            shutil.rmtree(self._private, ignore_errors=True)
