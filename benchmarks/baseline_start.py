"""What a fresh baseline worker costs before its first timed call, stage by stage.

    python benchmarks/baseline_start.py TASK.py [--device cuda] [--repeat 2]

Each configuration runs in a new process, as the judge's baseline worker does, with the
judge's cache folders: import torch; the prewarm's parts (dynamo and inductor imports,
triton's code generator, a tiny CPU compile); building the task's model; drawing its
inputs on the device; torch.compile's first call (trace + compile, or the on-disk cache).
Configurations: the inductor defaults, and TORCHINDUCTOR_COMPILE_THREADS=1 (compile in
the worker's own process: no pool of compile subprocesses to start). Each line is printed
as soon as its process ends.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHILD = r"""
import json, sys, time
marks = {}
last = [time.perf_counter()]
def mark(name):
    now = time.perf_counter(); marks[name] = round(now - last[0], 2); last[0] = now
import torch
mark("import_torch")
sys.path.insert(0, %(root)r)
from cudaopt.judge.building.loading import build_model, load_module
from cudaopt.judge.workers.tensors import draw_inputs
device = torch.device(%(device)r)
torch.empty(1, device=device); torch.cuda.synchronize() if device.type == "cuda" else None
mark("device_init")
if %(prewarm)r:
    import torch._dynamo
    mark("import_dynamo")
    import torch._inductor.compile_fx, torch._inductor.lowering
    mark("import_inductor")
    try:
        import torch._inductor.codegen.triton
    except ImportError:
        pass
    mark("import_triton_codegen")
    torch.compile(lambda x: x * 2 + 1)(torch.ones(4))
    mark("tiny_cpu_compile")
torch.set_grad_enabled(False)
task = load_module(__import__("pathlib").Path(%(task)r), "task")
model = build_model(task.Model, list(task.get_init_inputs()), 0, device)
mark("model")
inputs = draw_inputs(task, 1, device)
torch.cuda.synchronize() if device.type == "cuda" else None
mark("inputs")
compiled = torch.compile(model)
compiled(*inputs)
torch.cuda.synchronize() if device.type == "cuda" else None
mark("first_compiled_call")
compiled(*draw_inputs(task, 2, device))
torch.cuda.synchronize() if device.type == "cuda" else None
mark("second_call")
print("MARKS " + json.dumps(marks))
"""


def run(task: Path, device: str, prewarm: bool, env: dict[str, str]) -> dict | str:
    code = CHILD % {"root": str(ROOT), "device": device, "prewarm": prewarm,
                    "task": str(task.resolve())}
    try:
        proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                              text=True, timeout=240)
    except subprocess.TimeoutExpired:
        return "timeout"
    for line in proc.stdout.splitlines():
        if line.startswith("MARKS "):
            return json.loads(line[6:])
    return (proc.stdout + proc.stderr)[-1500:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task", type=Path)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    for threads in ("", "1"):
        cache = Path(tempfile.mkdtemp(prefix="baseline-start-"))
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(cache / "inductor"),
               "TRITON_CACHE_DIR": str(cache / "triton")}
        if threads:
            env["TORCHINDUCTOR_COMPILE_THREADS"] = threads
        for prewarm in (True, False):
            for attempt in range(args.repeat):
                found = run(args.task, args.device, prewarm, env)
                label = (f"threads={threads or 'default'} prewarm={prewarm} "
                         f"{'cold' if attempt == 0 and prewarm else 'warm'}")
                total = sum(found.values()) if isinstance(found, dict) else 0
                print(f"{label}: total {total:.1f} s {found}", flush=True)


if __name__ == "__main__":
    main()
