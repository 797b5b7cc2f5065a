"""What `ncu` runs: `python -m cudaopt.judge.insight.ncu_target TASK CANDIDATE BUILD_DIR`.

One warm-up call (lazy initialisation, first-call builds), then one call inside the NVTX
range Nsight Compute is told to profile, on inputs drawn on the device.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

from cudaopt.judge.building.loading import build_model, load_module
from cudaopt.judge.insight.ncu import RANGE
from cudaopt.judge.workers.tensors import draw_inputs


def main() -> None:
    task_path, candidate_path, build_dir = sys.argv[1:4]
    torch.set_grad_enabled(False)
    device = torch.device("cuda")
    if build_dir:
        sys.path.insert(0, build_dir)
    task = load_module(Path(task_path), "cudaopt_task")
    module = load_module(Path(candidate_path), "model_new")
    model = build_model(module.ModelNew, list(task.get_init_inputs()), 0, device)
    model(*draw_inputs(task, 1, device))
    inputs = draw_inputs(task, 2, device)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push(RANGE)
    model(*inputs)
    torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
