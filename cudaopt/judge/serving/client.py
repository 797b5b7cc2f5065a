"""The client side of `JudgeServer`: what `cudaopt verify` / `profile` use inside a run."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from pathlib import Path

from cudaopt.judge.serving.server import options_to_wire
from cudaopt.judge.verdict.options import JudgeOptions
from cudaopt.judge.verdict.verdict import Verdict


def remote_check(socket_path: Path, task: Path, candidate: Path, options: JudgeOptions,
                 progress: Callable[[str], None] | None = None) -> Verdict | None:
    """The server's verdict, or None when no server answers (judge locally instead)."""
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(str(socket_path))
    except OSError:
        return None
    with sock, sock.makefile("rwb") as stream:
        request = {"task": str(task.resolve()), "candidate": str(candidate.resolve()),
                   "options": options_to_wire(options)}
        stream.write((json.dumps(request) + "\n").encode())
        stream.flush()
        for line in stream:
            message = json.loads(line)
            if "verdict" in message:
                return Verdict.from_json(message["verdict"])
            if progress is not None:
                progress(message["progress"])
    return None
