"""The client side of the machine judge (`machine`): find it, or start it, and judge there.

Everything here falls back to None, and the caller judges in its own process: no machine
judge answering within `START_TIMEOUT_S`, one that went away mid-judgement, a folder that
is not this user's own. A judgement is never lost to the warm path.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from cudaopt.judge.serving.machine import (
    START_TIMEOUT_S,
    address,
    enabled,
    options_to_json,
)
from cudaopt.judge.verdict.options import JudgeOptions, Progress
from cudaopt.judge.verdict.verdict import Verdict
from cudaopt.judge.workers.child import python_path

MAIN = "cudaopt.judge.serving.machine_main"


def machine_check(task: Path, candidate: Path, options: JudgeOptions,
                  progress: Progress) -> Verdict | None:
    """The machine judge's verdict, or None where the caller must judge itself."""
    if not enabled():
        return None
    try:
        path = address()
        conn = _connect(path) or _start(path, progress)
    except OSError:
        return None
    if conn is None:
        return None
    request = {"task": str(task.resolve()), "candidate": str(candidate.resolve()),
               "options": options_to_json(options)}
    try:
        with conn, conn.makefile("rwb") as stream:
            stream.write((json.dumps(request) + "\n").encode())
            stream.flush()
            for line in stream:
                message = json.loads(line)
                if "verdict" in message:
                    return Verdict.from_json(message["verdict"])
                progress(message["progress"])
    except (OSError, ValueError):
        pass  # it went away mid-line
    progress("the warm judge stopped in the middle of this judgement: judging here instead")
    return None


def _connect(path: Path) -> socket.socket | None:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(str(path))
    except OSError:
        conn.close()
        return None
    return conn


def _start(path: Path, progress: Progress) -> socket.socket | None:
    """Start the machine judge (one starter at a time: a lock beside the socket) and wait
    until it answers."""
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        conn = _connect(path)  # another check started it while this one waited
        if conn is not None:
            return conn
        progress("starting the warm judge (later checks of this task reuse its workers)")
        env = {**os.environ, "PYTHONPATH": python_path(dict(os.environ))}
        with open(path.with_suffix(".log"), "ab") as log:
            subprocess.Popen([sys.executable, "-m", MAIN, str(path)], stdin=subprocess.DEVNULL,
                             stdout=log, stderr=subprocess.STDOUT, env=env,
                             start_new_session=True, cwd="/")
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            conn = _connect(path)
            if conn is not None:
                return conn
            time.sleep(0.05)
    return None
