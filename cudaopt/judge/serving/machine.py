"""One warm judge per machine: `cudaopt check` finds it, or starts it, and judges through it.

A cold `cudaopt check` starts reference and baseline processes that import torch, dynamo and
inductor and load the task (10-20 s of a judgement on an H200, 2026-12-03). The machine judge
keeps them: the first check starts it in the background, later checks of the same task (by
content, on the same device and settings) find its workers loaded and its baseline compiled.
One per user, Python, environment and cudaopt version (its socket's name digests them, so
a check from another virtual environment, with other CUDA settings or after an upgrade
gets its own), in a folder only that
user can enter; it answers only its own user, holds at most `MAX_POOLS` tasks' workers, and
exits when idle for `CUDAOPT_WARM_IDLE_S` seconds (600 by default). Killed or crashed, the
judgement it was running is judged again in the caller's own process, and the next check
starts a new one. Candidates still run in a process of their own each time: only the
reference and baseline workers, which never import a candidate, are shared. It also keeps
the loaded pairs that other tools' pools let go (a bench's slot, an agent run, `cudaopt
serve`) and lends them to the next pool of their task, its own included (`lender`,
`workers.lending`).
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sys
import tempfile
import threading
import time
from collections import OrderedDict
from dataclasses import fields
from pathlib import Path
from typing import Any

from cudaopt.judge.building.caches import worker_env
from cudaopt.judge.serving.lender import Store
from cudaopt.judge.serving.wire import close_all, read_message, socket_parent, write_message
from cudaopt.judge.verdict.options import JudgeOptions, resolve_device
from cudaopt.judge.verdict.verdict import Status, Verdict
from cudaopt.judge.workers.child import PACKAGE_PARENT
from cudaopt.judge.workers.lending import from_wire, sent, to_wire
from cudaopt.judge.workers.pool import JudgePool
from cudaopt.task import BadInput

IDLE_ENV, IDLE_S = "CUDAOPT_WARM_IDLE_S", 600.0
DISABLE_ENV = "CUDAOPT_WARM_JUDGE"  # "0": every check judges in its own process
MAX_POOLS = 2  # tasks whose workers stay loaded (each holds its model, on the GPU too)
START_TIMEOUT_S = 60.0
#: The environment a judgement depends on: a check differing in any of these gets a judge
#: of its own.
ENV_PREFIXES = ("CUDA", "TORCH", "TRITON", "XDG_", "HOME", "CUDAOPT_", "PYTHON", "LD_",
                "PATH", "NVIDIA", "OMP_", "MKL_")


def enabled() -> bool:
    return os.environ.get(DISABLE_ENV, "1") != "0"


def address(env: dict[str, str] | None = None) -> Path:
    """The socket of this user's machine judge for this Python, cudaopt and environment."""
    env = dict(os.environ if env is None else env)
    relevant = sorted((k, v) for k, v in env.items()
                      if k.startswith(ENV_PREFIXES) and k != IDLE_ENV)
    digest = hashlib.sha256(repr((sys.executable, PACKAGE_PARENT, relevant,
                                  code_version())).encode())
    return private_folder() / f"judge-{digest.hexdigest()[:16]}.sock"


def code_version(package: Path = Path(PACKAGE_PARENT) / "cudaopt") -> str:
    """The installed cudaopt's files, by name, size and modification time: a judge
    started before an upgrade or an edit runs the old code until it idles out, so a check
    after it gets a judge of its own (a stat of every file: about a millisecond)."""
    h = hashlib.sha256()
    for folder, dirs, files in sorted(os.walk(package)):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in sorted(files):
            stat = os.stat(os.path.join(folder, name))
            h.update(f"{folder}/{name}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return h.hexdigest()


def private_folder() -> Path:
    """A folder only this user can enter (AF_UNIX paths are short: under the system's
    temporary folder, not the cache)."""
    root, name = Path(tempfile.gettempdir()), f"cudaopt-{os.getuid()}"
    parent = socket_parent(len(f"{name}-0123456789ab/judge-0123456789abcdef.sock"))
    if parent != root:  # a deep TMPDIR, moved to /tmp: it keeps judges of its own there
        name += f"-{hashlib.sha256(os.fsencode(root)).hexdigest()[:12]}"
    folder = parent / name
    folder.mkdir(mode=0o700, exist_ok=True)
    stat = folder.stat()
    if stat.st_uid != os.getuid() or stat.st_mode & 0o077:
        raise PermissionError(f"{folder} is not this user's own folder (mode 700)")
    return folder


def same_user(conn: socket.socket) -> bool:
    """SO_PEERCRED: the connecting process's uid is ours."""
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
    return int.from_bytes(creds[4:8], sys.byteorder) == os.getuid()


class Pools:
    """The judge's warm pools by what a pool is bound to (device, caches, isolation), the
    least recently used closed beyond `MAX_POOLS`. Each lends through `store`: a pool
    moving to another task leaves its pair there, for itself or another process."""

    def __init__(self, store: Store | None = None) -> None:
        self._pools: OrderedDict[tuple[str, tuple[tuple[str, str], ...], bool], JudgePool] = (
            OrderedDict())
        self.store = store

    def get(self, options: JudgeOptions) -> JudgePool:
        env = worker_env(options)
        isolate = options.isolation != "off"
        key = (resolve_device(options.device), tuple(sorted(env.items())), isolate)
        if key not in self._pools:
            self._pools[key] = JudgePool(env, isolate=isolate)
            self._pools[key].lender = self.store
        self._pools.move_to_end(key)
        while len(self._pools) > MAX_POOLS:
            _, old = self._pools.popitem(last=False)
            old.close()
        return self._pools[key]

    def close(self) -> None:
        for pool in self._pools.values():
            pool.close()
        self._pools.clear()


def idle_s() -> float:
    try:
        return float(os.environ.get(IDLE_ENV, IDLE_S))
    except ValueError:
        return IDLE_S


class Judge:
    """The machine judge's state: its pools, the leases it keeps, one judgement at a time
    (two would time at once), and the connections being answered, each in its own thread
    so that a lease is handed over while a judgement runs."""

    def __init__(self, path: Path):
        self.store = Store(path.with_name(path.stem + "-leases"))
        self.pools = Pools(self.store)
        self.judging = threading.Lock()
        self.busy = 0  # connections being answered: the judge is not idle while any is
        self.last = time.monotonic()
        self._count = threading.Lock()

    def idle(self) -> bool:
        with self._count:
            return self.busy == 0 and time.monotonic() - self.last >= idle_s()

    def handle(self, conn: socket.socket) -> None:
        with self._count:
            self.busy += 1
        try:
            with conn:
                conn.settimeout(None)
                if same_user(conn):
                    answer(conn, self)
        finally:
            with self._count:
                self.busy -= 1
                self.last = time.monotonic()

    def close(self) -> None:
        self.pools.close()
        self.store.close()


def serve(path: Path) -> None:
    """Answer judgements and leases on `path` until idle for `idle_s()` seconds."""
    path.unlink(missing_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    path.chmod(0o600)
    listener.listen(16)
    listener.settimeout(1.0)
    judge = Judge(path)
    try:
        while not judge.idle():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            judge.last = time.monotonic()  # not idle while its thread starts
            threading.Thread(target=judge.handle, args=(conn,), daemon=True).start()
    finally:
        listener.close()
        if path.exists() and path.is_socket():
            path.unlink(missing_ok=True)
        with judge.judging:
            judge.close()


def answer(conn: socket.socket, judge: Judge) -> None:
    """One request: a lease to borrow or give (see `lending`), or {"task", "candidate",
    "options"} in and progress lines, then the verdict, out."""
    request, fds = read_message(conn)
    if request.get("op") in ("borrow", "give"):
        lend(conn, judge.store, request, fds)
        return
    close_all(fds)
    try:
        options = options_from_json(request["options"])
        task, candidate = Path(request["task"]), Path(request["candidate"])
    except (ValueError, KeyError, TypeError):
        return  # not a client of ours
    with judge.judging:
        _judge(conn, judge.pools, task, candidate, options)


def _judge(conn: socket.socket, pools: Pools, task: Path, candidate: Path,
           options: JudgeOptions) -> None:
    from cudaopt.judge.api import check

    stream = conn.makefile("wb")

    def send(message: dict[str, Any]) -> None:
        stream.write((json.dumps(message) + "\n").encode())
        stream.flush()

    try:
        try:
            pool = pools.get(options)
        except BadInput as exc:  # a device this machine lacks: said, and the judge stays up
            send({"verdict": Verdict(status=Status.BAD_INPUT, error=str(exc)).to_json()})
            return
        verdict = check(task, candidate, options, lambda text: send({"progress": text}),
                        pool=pool)
        send({"verdict": verdict.to_json()})
        # born warm: the next check of another task finds its processes past their imports
        # (an H200 host: 10-20 s of torch, dynamo and inductor), as this one's stay loaded
        if verdict.device:
            pool.prestart_for(options, verdict.device)
    except (OSError, ValueError):
        pass  # the client went away: the next request finds the pool as it is


def lend(conn: socket.socket, store: Store, request: dict[str, Any], fds: list[int]) -> None:
    """Hand a lease out (its descriptors go, this process's ends close) or take one in."""
    try:
        if request["op"] == "give":
            store.give(from_wire(request["lease"], fds))
            write_message(conn, {"ok": True})
            return
        close_all(fds)
        lease = store.borrow(str(request["key"]))
        if lease is None:
            write_message(conn, {"lease": None})
            return
        message, out = to_wire(lease)
        try:
            write_message(conn, {"lease": message}, out)
        except OSError:
            store.give(lease)  # the borrower went away: kept for the next
            return
        sent(lease, out)
    except (KeyError, TypeError, ValueError, IndexError, OSError):
        pass  # malformed: a lease that does not parse was never taken


def options_to_json(options: JudgeOptions) -> dict[str, Any]:
    return {f.name: (str(v) if isinstance(v, Path) else v)
            for f in fields(options) for v in [getattr(options, f.name)]}


def options_from_json(data: dict[str, Any]) -> JudgeOptions:
    known = {f.name for f in fields(JudgeOptions)}
    values = {k: v for k, v in data.items() if k in known}
    for name in ("build_dir", "cache_dir"):
        if values.get(name) is not None:
            values[name] = Path(values[name])
    return JudgeOptions(**values)
