"""The template that trusted workers are forked from: `python -m cudaopt.judge.roles.template FD`.

It imports torch, dynamo, inductor and the reference role once (9-14 s on a busy H200 host),
says it is ready, and then forks a reference worker for each request on the socket `FD`:
a fork is ready in a fraction of a second. It never loads a task, draws an input, touches a
GPU or holds an output, so a fork inherits nothing of any judgement; and before the fork
runs anything it keeps only the three descriptors the request hands over (its command pipe,
its reply pipe, its log) and takes the environment, folder and CPUs the judge asks for.
Only the reference role is ever forked: a candidate is always a new process, started by the
judge inside its own namespaces (see `workers.template`).

A request is one SEQPACKET message: JSON `{"role", "env", "cwd", "cpus", "policy", "nice"}`
with the three descriptors attached. The answer is `{"pid": N}` with a pidfd of the fork
attached (opened here while the fork cannot yet have been reaped), or `{"error": ...}`.
"""

from __future__ import annotations

import json
import os
import select
import socket
import sys
import threading
import traceback
import warnings

import torch

from cudaopt.judge.building.caches import prewarm_compile
from cudaopt.judge.roles import reference as _reference  # noqa: F401 - imported once, here
from cudaopt.judge.roles.worker import run

#: Where a fork's reply pipe sits; the worker reads the number from its environment.
REPLY_FD = 3


def _child(request: dict, fds: list[int]) -> None:
    """In the fork: become the worker the request describes; never return to the loop."""
    try:
        os.setsid()  # its own process group: a kill of the worker ends what it started
        commands, reply, log = fds
        os.dup2(commands, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.dup2(reply, REPLY_FD)
        os.closerange(REPLY_FD + 1, os.sysconf("SC_OPEN_MAX"))
        os.environ.clear()
        os.environ.update({**request["env"], "CUDAOPT_REPLY_FD": str(REPLY_FD)})
        os.chdir(request["cwd"])
        if request.get("cpus"):
            os.sched_setaffinity(0, request["cpus"])
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the worker's command stream
        run(request["role"])
    except BaseException:  # noqa: BLE001 - the log says why; the judge sees a crash
        traceback.print_exc()
        sys.stderr.flush()
    os._exit(70)


def _schedule(request: dict) -> None:
    """Take the judge's scheduling before forking, whatever this process was given since:
    any process of the same user (an unisolated candidate among them) may renice the
    template or move it to SCHED_IDLE, and every later fork would inherit that into the
    baselines it times. Where it cannot be taken back (raising a priority needs privilege),
    this raises: the judge then replaces the template and starts that worker anew."""
    os.sched_setscheduler(0, request["policy"], os.sched_param(0))
    if os.getpriority(os.PRIO_PROCESS, 0) != request["nice"]:
        os.setpriority(os.PRIO_PROCESS, 0, request["nice"])


def _fork(sock: socket.socket, request: dict, fds: list[int]) -> None:
    _schedule(request)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        sock.close()
        _child(request, fds)
    pidfd = os.pidfd_open(pid)  # unreaped until the loop's next `waitpid`: still our child
    try:
        socket.send_fds(sock, [json.dumps({"pid": pid}).encode()], [pidfd])
    finally:
        os.close(pidfd)


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def serve(sock: socket.socket) -> None:
    """Forks on request until the judge's end of the socket closes (it exited)."""
    while True:
        ready, _, _ = select.select([sock], [], [], 1.0)
        _reap()
        if not ready:
            continue
        data, fds, _, _ = socket.recv_fds(sock, 1 << 20, 3)
        if not data:
            return
        try:
            request = json.loads(data)
            if len(fds) != 3 or request.get("role") != "reference":
                raise ValueError("a request is the reference role and three descriptors")
            _fork(sock, request, fds)
        except Exception as exc:  # noqa: BLE001 - the judge starts that worker itself
            sock.send(json.dumps({"error": f"{type(exc).__name__}: {exc}"}).encode())
        finally:
            for fd in fds:  # the fork holds its own copies
                os.close(fd)


def refusal() -> str | None:
    """Why forking from this process would be unsafe, or None. A fork is safe from one
    Python thread (the BLAS library's pool is fork-safe), never once torch has set CUDA up.
    The imports load the CUDA driver on a GPU machine (an H200 with driver 580 showed its
    thread) without a context, and a fork there initialises CUDA and compiles; where a fork
    cannot, the probe says so and every worker starts anew."""
    if threading.active_count() > 1:
        return f"{threading.active_count()} Python threads"
    if torch.cuda.is_initialized():
        return "CUDA was initialised during the imports"
    if torch.cuda.is_available() and not _fork_uses_cuda():  # NVML's answer: no CUDA here
        return "a fork of it could not use CUDA"
    return None


def _fork_uses_cuda() -> bool:
    pid = os.fork()
    if pid == 0:
        try:
            torch.ones(1, device="cuda").add_(1).item()
            os._exit(0)
        except BaseException:  # noqa: BLE001 - the exit status says it
            os._exit(1)
    return os.waitpid(pid, 0)[1] == 0


def main() -> None:
    # the BLAS library's threads are fork-safe (see `refusal`); Python warns of any thread
    warnings.filterwarnings("ignore", ".*use of fork\\(\\) may lead to deadlocks",
                            DeprecationWarning)
    sock = socket.socket(fileno=int(sys.argv[1]))
    torch.set_grad_enabled(False)
    prewarm_compile()
    refused = refusal()
    sock.send(json.dumps({"ready": refused is None, "refused": refused}).encode())
    if refused is None:
        serve(sock)
    os._exit(0)


if __name__ == "__main__":
    main()
