"""The reference worker: runs the task's `Model`, eager and compiled, and compares.

It never imports the candidate, so nothing a candidate patches at import can slow the
baselines down or change how outputs are compared.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import torch

from cudaopt.judge.tensors import compare, describe, draw_inputs, read_outputs
from cudaopt.judge.timing import CallTimer
from cudaopt.judge.worker import build_model, load_module


class ReferenceWorker:
    def __init__(self) -> None:
        self.task: Any = None
        self.model: Any = None
        self.compiled: Any = None
        self.device = torch.device("cpu")
        self.refs: dict[str, Any] = {}
        self.timer: CallTimer | None = None

    def handlers(self) -> dict[str, Any]:
        return {"load": self.load, "reference": self.reference, "compare": self.compare,
                "compile": self.compile, "time": self.time, "exit": lambda cmd: {}}

    def load(self, cmd: dict[str, Any]) -> dict[str, Any]:
        self.device = torch.device(cmd["device"])
        self.task = load_module(Path(cmd["task"]), "cudaopt_task")
        init_inputs = list(self.task.get_init_inputs())
        self.model = build_model(self.task.Model, init_inputs, cmd["init_seed"], self.device)
        torch.save(self.model.state_dict(), cmd["state_path"])
        self.timer = CallTimer(self.device)
        name = (torch.cuda.get_device_name(self.device) if self.device.type == "cuda"
                else "cpu")
        return {"device_name": name, "torch_version": torch.__version__}

    def reference(self, cmd: dict[str, Any]) -> dict[str, Any]:
        inputs = draw_inputs(self.task, cmd["seed"], self.device)
        out = self.model(*inputs)
        self.timer.sync()
        self.refs[cmd["key"]] = out  # kept alive until compared
        return {"leaves": describe(out)}

    def compare(self, cmd: dict[str, Any]) -> dict[str, Any]:
        ref = self.refs.pop(cmd["key"])
        cand = read_outputs(cmd["manifest"], self.device)
        return {"mismatch": compare(ref, cand, cmd["atol"], cmd["rtol"])}

    def compile(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Compile and warm torch.compile once; its inductor cache makes the next run cheap."""
        start = time.perf_counter()
        self.compiled = torch.compile(self.model, mode=cmd["mode"])
        for seed in cmd["seeds"]:
            self.compiled(*draw_inputs(self.task, seed, self.device))
        self.timer.sync()
        return {"compile_s": time.perf_counter() - start}

    def time(self, cmd: dict[str, Any]) -> dict[str, Any]:
        fn = self.compiled if cmd["which"] == "compile" else self.model
        ms, host = [], []
        for seed in cmd["seeds"]:
            inputs = draw_inputs(self.task, seed, self.device)
            dev_ms, host_ms, out = self.timer.time(fn, inputs)
            del out, inputs
            ms.append(dev_ms)
            host.append(host_ms)
        return {"ms": ms, "host_ms": host}
