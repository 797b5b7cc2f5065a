"""A driver for the Ctrl-C test: naps on the Ray cluster at RAY_ADDRESS, each result
appended to a file as it comes back, as bench does.

    python -m tests.executor.ray_driver RESULTS MARKS N
"""

from __future__ import annotations

import json
import signal
import sys
from concurrent.futures import as_completed

from cudaopt.executor import Job, Sources
from cudaopt.executor.cluster import RayExecutor
from cudaopt.judge import JudgeOptions


def main(out: str, marks: str, count: int) -> None:
    # As `cudaopt bench` does: a process started in the background inherits SIGINT ignored.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sources = Sources("t.py", "class Model: pass\n")
    jobs = [Job(f"nap{i}", "nap", sources, JudgeOptions(), {"marks": marks, "s": 1.0})
            for i in range(count)]
    with RayExecutor("auto", "cpu", plugins=("tests.executor.ray_plugin",)) as ex, \
            open(out, "a") as sink:
        for future in as_completed([ex.submit(job) for job in jobs]):
            result = future.result()
            if result.infra_error is None:
                sink.write(json.dumps(result.to_json()) + "\n")
                sink.flush()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
