"""Trusted workers forked from a warm template instead of started as new Pythons.

A reference or baseline process started anew imports torch, dynamo and inductor before it
does anything: 9-14 s of every task's preparation on a busy H200 host (`load.reference.boot`
and `baselines.boot` over a 16-task bench, 2026-12-04), paid again for each task of a bench
or a reward service and each new task of the machine's warm judge. A long-lived pool asks
the template of its judge process (`roles.template`, one per environment) to fork them
instead: ready in a fraction of a second.

Only reference-role processes are forked; they never import candidate code. The template
never holds a task, a seed or an output, so a fork inherits no page of any judgement, and it
keeps only the descriptors handed to it. A candidate is never forked: its namespaces are made
by starting a process (bubblewrap), and a fork of a shared template would share a PID
namespace with every sibling forked there.

A template that is not ready yet, or that fails, costs nothing but its own start: the
worker asked for meanwhile starts as a new process, as it would without one.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
from collections import OrderedDict

from cudaopt.judge.workers import spawner
from cudaopt.judge.workers.adopted import Adopted
from cudaopt.judge.workers.scheduling import own
from cudaopt.judge.workers.scratch import scratch_root

#: "0" turns forking off: every worker starts as a new process.
FORK_ENV = "CUDAOPT_FORK_WORKERS"
#: The variables a template is chosen by: those that torch, Triton, CUDA, the BLAS libraries,
#: the loader and Python read as they load. A fork gets the whole environment it is asked
#: for; the rest (cudaopt's own, a test runner's) is read only when used.
IMPORTED = ("TORCH", "PYTORCH", "TRITON", "CUDA_", "NVIDIA", "NCCL", "OMP_", "MKL", "KMP_",
            "GOMP_", "OPENBLAS", "LD_", "PYTHON", "HOME", "PATH", "TMPDIR")
#: ... except these, read only when used: one template serves workers that differ in them.
PER_WORKER = frozenset({"TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "TORCH_EXTENSIONS_DIR"})
#: Templates kept per judge process, the least recently used closed first.
MAX_TEMPLATES = 2
_ANSWER_S = 10.0  # a fork answers at once; one that does not is a broken template


class Template:
    """One template process and the socket to it. Requests are made one at a time."""

    def __init__(self, env: dict[str, str]):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - lives as long as the process
            prefix="cudaopt-template-", suffix=".log", dir=scratch_root())
        self.proc = spawner.popen(
            [sys.executable, "-m", "cudaopt.judge.roles.template", str(theirs.fileno())],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
            pass_fds=(theirs.fileno(),), start_new_session=True,
            env={**env, "PYTORCH_NVML_BASED_CUDA_CHECK": "1"})  # no CUDA before a fork
        theirs.close()
        self._sock = ours
        self._lock = threading.Lock()
        # then "ready", "broken" (replaced at the next request), or "refused": it said why
        # forking here would be unsafe, and the judge starts its workers anew
        self.state = "starting"
        self.refused: str | None = None

    def ready(self) -> bool:
        """Whether it has said it is ready; never waits."""
        with self._lock:
            if self.state == "starting":
                self._sock.setblocking(False)
                try:
                    hello = json.loads(self._sock.recv(4096) or b"{}")
                    self.refused = hello.get("refused")
                    self.state = ("ready" if hello.get("ready") else
                                  "refused" if self.refused else "broken")
                except BlockingIOError:
                    pass
                except (OSError, ValueError):
                    self.state = "broken"
                self._sock.setblocking(True)
            return self.state == "ready"

    def fork(self, env: dict[str, str], fds: tuple[int, int, int]) -> Adopted | None:
        """A reference worker with `env` and these (command, reply, log) descriptors; None
        when the template could not make one (it is then closed)."""
        policy, nice = own()
        request = {"role": "reference", "env": env, "cwd": os.getcwd(),
                   "cpus": sorted(os.sched_getaffinity(0)), "policy": policy, "nice": nice}
        with self._lock:
            try:
                self._sock.settimeout(_ANSWER_S)
                socket.send_fds(self._sock, [json.dumps(request).encode()], list(fds))
                data, got, _, _ = socket.recv_fds(self._sock, 4096, 1)
                answer = json.loads(data or b"{}")
            except (OSError, ValueError):
                answer, got = {}, []
        if "pid" in answer and len(got) == 1:
            return Adopted(int(answer["pid"]), got[0])
        for fd in got:
            os.close(fd)
        self.close()
        return None

    def close(self) -> None:
        """Killed, not asked: it holds nothing of a judgement, may still be importing, and
        its forks live on in sessions of their own."""
        self.state = "broken"
        self._sock.close()
        self.proc.kill()
        self.proc.wait()
        self.log.close()


_templates: OrderedDict[str, Template] = OrderedDict()
_registry = threading.Lock()


def _imported(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith(IMPORTED) and k not in PER_WORKER}


def fork_reference(env: dict[str, str], fds: tuple[int, int, int]) -> Adopted | None:
    """A reference worker forked with the full environment `env` and these (command, reply,
    log) descriptors, or None: none ready for `env` yet (one starts now for the next), or
    forking turned off (`CUDAOPT_FORK_WORKERS=0` in `env`). Long-lived pools ask, and
    one-off pools after a process's first (`JudgePool.forks`)."""
    if env.get(FORK_ENV) == "0":
        return None
    key = json.dumps(sorted(_imported(env).items()))
    with _registry:
        template = _templates.get(key)
        if template is not None and template.state == "broken":
            del _templates[key]
            template = None
        if template is None:
            template = _templates[key] = Template(_imported(env))
            while len(_templates) > MAX_TEMPLATES:
                _templates.popitem(last=False)[1].close()
        _templates.move_to_end(key)
    return template.fork(env, fds) if template.ready() else None


def close_all() -> None:
    """End every template of this process (their forks live on: they are the pools')."""
    with _registry:
        while _templates:
            _templates.popitem()[1].close()


def refusals() -> list[str]:
    """Why templates of this process would not fork, as they said (for a benchmark's log)."""
    with _registry:
        return [t.refused for t in _templates.values() if t.refused]


def starting_pids() -> list[int]:
    """The templates of this process still importing (seconds of CPU each), for the judge to
    stop while a CPU judgement times (`JudgePool.quiet`); one that is ready waits idle."""
    with _registry:
        return [t.proc.pid for t in _templates.values()
                if not t.ready() and t.state == "starting" and t.proc.poll() is None]


def template_pids() -> list[int]:
    """The template processes alive now, for tests and diagnostics."""
    with _registry:
        return [t.proc.pid for t in _templates.values() if t.proc.poll() is None]
