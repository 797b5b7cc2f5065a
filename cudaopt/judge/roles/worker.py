"""Child-process entry point: `python -m cudaopt.judge.roles.worker reference|candidate`.

Commands arrive as JSON lines on stdin; replies go out as JSON lines on a separate pipe
(the side channel named by CUDAOPT_REPLY_FD), so whatever the candidate prints on stdout
cannot be mistaken for a reply. Only the candidate worker ever imports candidate code.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from typing import Any

import torch

from cudaopt.judge.building.caches import prewarm_compile
from cudaopt.judge.roles.allocator import steady_allocator
from cudaopt.judge.workers.child import CUDA_AHEAD_ENV, PREWARM_ENV, SPAWNED_ENV
from cudaopt.judge.workers.digest import preload_kernel


def serve(handlers: dict[str, Any]) -> None:
    reply = os.fdopen(int(os.environ["CUDAOPT_REPLY_FD"]), "w", buffering=1)
    for line in sys.stdin:
        cmd = json.loads(line)
        try:
            result = handlers[cmd["op"]](cmd)
            result.setdefault("ok", True)
        except Exception as exc:  # noqa: BLE001 - every failure becomes a reply
            result = {"ok": False, "kind": type(exc).__name__,
                      "error": "".join(traceback.format_exception(exc))[-6000:]}
        reply.write(json.dumps(result) + "\n")
        if cmd["op"] == "exit":
            break
    reply.close()


def run(role: str) -> None:
    """Serve as `role` until told to exit; a worker forked from the template comes here too
    (`roles.template`), its imports already done. Both contestants' processes allocate
    alike (`allocator`)."""
    steady_allocator()
    torch.set_grad_enabled(False)
    boot: dict[str, float] = {}
    if os.environ.get(CUDA_AHEAD_ENV):
        started = time.perf_counter()
        ready_cuda()
        boot["cuda"] = time.perf_counter() - started
    if os.environ.get(PREWARM_ENV) == "compile":
        started = time.perf_counter()
        prewarm_compile()
        boot["prewarm"] = time.perf_counter() - started
    preload_kernel()
    spawned = float(os.environ.get(SPAWNED_ENV, "0") or 0)
    if spawned:
        boot["boot"] = max(0.0, time.time() - spawned)  # import torch and prewarm included
    if role == "reference":
        from cudaopt.judge.roles.reference import ReferenceWorker

        serve(ReferenceWorker(boot).handlers())
    else:
        from cudaopt.judge.roles.candidate import CandidateWorker

        serve(CandidateWorker(boot).handlers())
    sys.stdout.flush()
    os._exit(0)  # skip interpreter teardown: a broken extension may crash in destructors


def ready_cuda() -> None:
    """The CUDA context made before the first message: the next candidate's process, started
    ahead of need, would otherwise make it inside its judgement, after the judge has asked
    for its import. Only the judge's own code runs here, before any candidate code is
    imported. Without a usable GPU there is nothing to make; the judgement then says so.
    Trusted workers are not asked to: see docs/judge.md."""
    try:
        if torch.cuda.is_available():
            torch.empty(1, device="cuda")
            torch.cuda.synchronize()
    except RuntimeError:
        pass


def main() -> None:
    run(sys.argv[1])


if __name__ == "__main__":
    main()
