"""`cudaopt serve`: a warm judge for one folder, found by `cudaopt check` run inside it.

A one-off check starts three Python processes and traces the torch.compile baseline again
(most of its wall time on a GPU machine, see benchmarks/). A user iterating on a kernel by
hand gets the agent loop's warm pool instead: the server keeps the task's reference and
baseline workers loaded, and announces its socket in the folder's `.cudaopt/` state folder,
where `find_server` looks for it from a candidate upwards.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from cudaopt.judge.building.caches import worker_env
from cudaopt.judge.serving.machine_client import machine_lender
from cudaopt.judge.serving.server import JudgeServer
from cudaopt.judge.verdict.options import JudgeOptions
from cudaopt.judge.workers.pool import JudgePool
from cudaopt.runs.folder import STATE_DIR, state_dir

POINTER = "judge-socket"  # inside the state folder: the path of the running server's socket


def serve(folder: Path, options: JudgeOptions, ready: Callable[[Path], None]) -> None:
    """Serve judgements of candidates under `folder` until interrupted (KeyboardInterrupt)."""
    folder = folder.resolve()
    pool = JudgePool(worker_env(options))
    pool.lender = machine_lender()  # its task's pair outlives it
    server = JudgeServer(None, pool, folder, options)  # the state folder holds its path
    pointer = state_dir(folder) / POINTER
    try:
        server.start()
        pointer.write_text(str(server.socket_path) + "\n")
        ready(server.socket_path)
        while True:
            time.sleep(3600)
    finally:
        if pointer.is_file() and pointer.read_text().strip() == str(server.socket_path):
            pointer.unlink()  # a newer server for the folder may have replaced it
        server.close()
        pool.close()


def find_server(start: Path) -> tuple[Path, Path] | None:
    """(socket, served folder) of a `cudaopt serve` announced in `start` or a folder above
    it, if any. Whether it still answers is the client's to find out (a killed server
    leaves its pointer behind)."""
    for folder in [start, *start.parents]:
        pointer = folder / STATE_DIR / POINTER
        if pointer.is_file():
            return Path(pointer.read_text().strip()), folder
    return None
