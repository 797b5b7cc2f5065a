"""What the torch.compile baseline costs a fresh judge process, cold and warm caches, as
started plain and as the judge starts its baseline worker (prewarmed: torch.compile's
machinery imported and exercised on the CPU while the worker waits for its task).

    python benchmarks/compile_cost.py [TASK.py ...]     # default: benchmarks/suite tasks

Each configuration runs in a new process, as the judge's baseline worker does: import torch
(and prewarm), build the task's model on the GPU, torch.compile it and make the first two
calls. Printed: seconds for the import (and prewarm, which the judge hides behind other
work), the model, and the compile (first calls): the part on a judgement's critical path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import torch
sys.path.insert(0, %(root)r)
from cudaopt.judge.building.loading import load_module
from cudaopt.judge import prewarm_compile
if %(prewarm)r:
    prewarm_compile()
t1 = time.perf_counter()
task = load_module(__import__("pathlib").Path(%(task)r), "task")
model = task.Model(*task.get_init_inputs()).cuda().eval()
inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in task.get_inputs()]
torch.cuda.synchronize()
t2 = time.perf_counter()
compiled = torch.compile(model)
with torch.no_grad():
    compiled(*inputs); compiled(*inputs)
torch.cuda.synchronize()
t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "model": t2 - t1, "compile": t3 - t2}))
"""


def run(task: Path, cache: Path, prewarm: bool) -> dict[str, float]:
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(cache / "inductor"),
           "TRITON_CACHE_DIR": str(cache / "triton")}
    code = CHILD % {"root": str(ROOT), "task": str(task), "prewarm": prewarm}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=600)
    if done.returncode:
        return {"error": done.stderr[-300:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    tasks = [Path(a) for a in sys.argv[1:]] or sorted((ROOT / "benchmarks" / "suite").glob(
        "level*/*.py"))
    print(f"{'task':<24}{'start':>9}{'cache':>7}{'import s':>10}{'model s':>9}{'compile s':>11}")
    for prewarm in (False, True):
        with tempfile.TemporaryDirectory() as tmp:
            for task in tasks:
                for cache in ("cold", "warm"):
                    got = run(task, Path(tmp), prewarm)
                    if "error" in got:
                        print(f"{task.stem[:23]:<24} error: {got['error']}")
                        continue
                    print(f"{task.stem[:23]:<24}{'prewarm' if prewarm else 'plain':>9}{cache:>7}"
                          f"{got['import']:>10.2f}{got['model']:>9.2f}{got['compile']:>11.2f}",
                          flush=True)


if __name__ == "__main__":
    main()
