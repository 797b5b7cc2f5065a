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
from cudaopt.judge.serving.wire import close_all, read_message, write_message
from cudaopt.judge.verdict.options import JudgeOptions, Progress
from cudaopt.judge.verdict.verdict import Verdict
from cudaopt.judge.workers.child import python_path
from cudaopt.judge.workers.lending import Lease, Lender, from_wire, sent, to_wire

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


class MachineLender:
    """The machine judge as the `Lender` of a pool in another process (a bench's or reward
    service's slot, an agent run): its pair goes to the judge when it moves on, and the next
    pool of the task, here or in a later run, borrows it instead of loading its own. Asking
    costs a connection (about a millisecond); giving starts the judge where none runs."""

    def __init__(self, path: Path):
        self.path = path
        self.unreachable = False  # a judge that would not start is not waited for again

    def borrow(self, key: str) -> Lease | None:
        try:
            conn = _connect(self.path)
            if conn is None:
                return None
            with conn:
                write_message(conn, {"op": "borrow", "key": key})
                message, fds = read_message(conn)
        except OSError:
            return None
        if not message.get("lease"):
            close_all(fds)
            return None
        return from_wire(message["lease"], fds)

    def give(self, lease: Lease) -> None:
        """Always takes the lease: kept by the judge, or closed where none answers."""
        try:
            conn = _connect(self.path) or (
                None if self.unreachable else _start(self.path, lambda _: None))
        except OSError:
            conn = None
        if conn is None:
            self.unreachable = True
            lease.close()
            return
        message, fds = to_wire(lease)
        answered = False
        try:
            with conn:
                write_message(conn, {"op": "give", "lease": message}, fds)
                answered = bool(read_message(conn)[0].get("ok"))
        except OSError:
            pass
        sent(lease, fds, delivered=answered)


def machine_lender() -> Lender | None:
    """The lender a warm pool outside the machine judge uses, or None where the warm judge
    is turned off (CUDAOPT_WARM_JUDGE=0) or its folder is not this user's own."""
    if not enabled():
        return None
    try:
        return MachineLender(address())
    except OSError:
        return None


def _connect(path: Path) -> socket.socket | None:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(str(path))
    except OSError:
        conn.close()
        return None
    return conn


#: Starts its arguments in a session of their own and exits at once: the machine judge, a
#: service of the whole machine, is then no descendant of the process that happened to
#: start it. A judgement counts its own descendants' CPU as its own work, not contention,
#: so the judge's start (seconds of `import torch`) and its later work beside a bench slot's
#: or an agent run's timing went unseen there: no contention found, no re-measurement.
_DETACHED = "import subprocess, sys; subprocess.Popen(sys.argv[1:], start_new_session=True)"


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
        try:
            with open(path.with_suffix(".log"), "ab") as log:
                subprocess.run([sys.executable, "-c", _DETACHED, sys.executable, "-m", MAIN,
                                str(path)], stdin=subprocess.DEVNULL, stdout=log,
                               stderr=subprocess.STDOUT, env=env, cwd="/", timeout=60,
                               check=True)
        except subprocess.SubprocessError:  # the launcher failed: the check judges alone
            return None
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            conn = _connect(path)
            if conn is not None:
                return conn
            time.sleep(0.05)
    return None
