"""The reference worker: runs the task's `Model`, eager and compiled, and compares.

It never imports the candidate, so nothing a candidate patches at import can slow the
baselines down or change how outputs are compared. It runs the same per-call protocol as
the candidate worker (see `bench`), so the overhead the parent's clock sees around a call
is the same on both sides.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import torch

from cudaopt.judge.building.caches import compile_counters, first_call
from cudaopt.judge.building.loading import build_model, host_math, load_module, use_threads
from cudaopt.judge.building.vec_isa import kept_vec_isa
from cudaopt.judge.checks.signal import perturbed
from cudaopt.judge.checks.tracker import Tracker
from cudaopt.judge.roles import made
from cudaopt.judge.timing import pinning
from cudaopt.judge.timing.bench import Bench
from cudaopt.judge.timing.burst import Burst, fastest_mode
from cudaopt.judge.workers import ipc
from cudaopt.judge.workers.devlock import gpu_turn
from cudaopt.judge.workers.tensors import (
    compare,
    describe,
    draw_inputs,
    finite,
    flatten,
    unflatten,
)
from cudaopt.judge.workers.transfer import manifest_digest, read_outputs
from cudaopt.judge.workers.weights import save_state


class Stopwatch:
    """Seconds per named part of a step, for the verdict's `phases_s` sub-phases."""

    def __init__(self) -> None:
        self.parts: dict[str, float] = {}
        self._last = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.parts[name] = self.parts.get(name, 0.0) + now - self._last
        self._last = now


class ReferenceWorker:
    def __init__(self, boot: dict[str, float] | None = None) -> None:
        self.boot = dict(boot or {})  # start-up seconds, reported by the first load
        self.model: Any = None
        self.compiled: Any = None
        self.bench: Bench | None = None
        self.modes: dict[str, Any] = {}  # torch.compile mode -> compiled model
        self.mode = ""  # the fastest of them per call: the compile baseline
        self.burst: Burst | None = None
        self.signal = Tracker()

    def handlers(self) -> dict[str, Any]:
        return {"load": self.load, "warm": self._turn(self.warm),
                "compile": self._turn(self.compile, compiling=True), "prep": self.prep,
                "go": self.go, "finish": self.finish, "compare": self._host(self.compare),
                "trim": self.trim, "burst": self.burst_ready, "burst_go": self.burst_go,
                "traits": self.traits,
                "signal": self._host(self.signal_findings),
                "exit": lambda cmd: {},
                "pin": lambda cmd: pinning.handle(cmd, made(self.bench, "load").device)}

    def _host(self, step: Any) -> Any:
        """`step`, the judge's own math on outputs, with one thread on a GPU (`host_math`)."""
        def alone(cmd: dict[str, Any]) -> dict[str, Any]:
            with host_math(self.bench is not None and self.bench.device.type == "cuda"):
                return step(cmd)
        return alone

    def _turn(self, step: Any, compiling: bool = False) -> Any:
        """`step`, holding the GPU (see `devlock.gpu_turn`) when it runs on one; a
        `compiling` step lets it go while torch.compile compiles, unless a mode it compiles
        benchmarks on the GPU as it compiles (max-autotune)."""
        def held(cmd: dict[str, Any]) -> dict[str, Any]:
            device = cmd.get("device") or (self.bench.device.type if self.bench else "cpu")
            quiet = compiling and "max-autotune" not in cmd.get("mode", "")
            with gpu_turn(str(device).startswith("cuda"), compiling=quiet):
                return step(cmd)
        return held

    def load(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Load the task; a second load (new weights for a final check, see
        `JudgePool.reseed`) first forgets the model and torch.compile's code for it. The
        GPU's turn (`devlock.gpu_turn`) covers the model's build on the device and its
        weights' copy to the host, not the task's import nor the weights' file: writing it
        took up to 12 s for a real KernelBench task on an H200, while other judgements
        waited for the GPU."""
        clock = Stopwatch()
        if self.model is not None:
            self.model = self.compiled = self.bench = self.burst = None
            self.modes = {}
            torch._dynamo.reset()
        device = torch.device(cmd["device"])
        use_threads(cmd.get("threads"))
        task = load_module(Path(cmd["task"]), "cudaopt_task")
        clock.lap("import")
        init_inputs = list(task.get_init_inputs())
        with gpu_turn(device.type == "cuda"):
            self.model = build_model(task.Model, init_inputs, cmd["init_seed"], device)
            self.bench = Bench(task, device)
            self.burst = Burst(self.bench)
            state = {key: value.detach().cpu() if isinstance(value, torch.Tensor) else value
                     for key, value in self.model.state_dict().items()}
        clock.lap("model")
        digest = save_state(state, Path(cmd["state_path"]), bool(cmd.get("state_digest")))
        del state
        clock.lap("state_dict")
        name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
        parts, self.boot = {**self.boot, **clock.parts}, {}
        return {"device_name": name, "torch_version": torch.__version__, "parts_s": parts,
                **({"state_sha256": digest} if digest else {})}

    def warm(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """One untimed call, so first-call costs (lazy init, allocator growth) come early."""
        bench = made(self.bench, "load")
        self.model(*draw_inputs(bench.task, cmd["seed"], bench.device))
        bench.timer.sync()
        return {}

    def compile(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Compile and warm torch.compile once per mode (comma-separated); its inductor cache
        makes the next run cheap. Several modes: the fastest per call is the baseline."""
        start = time.perf_counter()
        bench = made(self.bench, "load")
        clock, before = Stopwatch(), compile_counters()
        with kept_vec_isa():
            self.modes = {mode: torch.compile(self.model, mode=mode)
                          for mode in cmd["mode"].split(",")}
            clock.lap("wrap")
            for mode, compiled in self.modes.items():
                for i, seed in enumerate(cmd["seeds"]):
                    inputs = draw_inputs(bench.task, seed, bench.device)
                    bench.timer.sync()
                    clock.lap("inputs")
                    first_call(compiled, inputs) if i == 0 else compiled(*inputs)
                    bench.timer.sync()
                    clock.lap(f"compile:{mode}" if i == 0 else "later_calls")
                    del inputs
        self.mode = fastest_mode(bench, self.modes, cmd["seeds"] * 3)
        self.compiled = self.modes[self.mode]
        clock.lap("mode_selection")
        self.trim(cmd)
        clock.lap("trim")
        return {"compile_s": time.perf_counter() - start, "mode": self.mode,
                "parts_s": clock.parts, "cache": compile_counters(before)}

    def burst_ready(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Inputs of back-to-back calls of eager or one compile mode (`compile:MODE`)."""
        return made(self.burst, "load").ready(self._contestant(cmd["which"]), cmd)

    def burst_go(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """The back-to-back calls `burst_ready` prepared."""
        fn = self._contestant(cmd["which"])
        return {**made(self.burst, "load").go(fn, cmd), "compile_mode": self.mode}

    def _contestant(self, which: str) -> Any:
        return self.model if which == "eager" else self.modes[which.split(":", 1)[1]]

    def traits(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """What the roofline needs: bytes, FLOPs and dtype of the task, the device's peaks;
        and the device memory held after the call it made, which it gives back."""
        from cudaopt.judge.timing import roofline

        bench = made(self.bench, "load")
        inputs = draw_inputs(bench.task, cmd["seed"], bench.device)
        found = roofline.traits(self.model, inputs)
        del inputs
        peaks = roofline.device_peaks(bench.device, Path(cmd["cache"]))
        # the call's inputs and outputs, cached by the allocator: given back, as `trim` does
        return {"task": found, "peaks": peaks, **self.trim(cmd)}

    def prep(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """A derived input (`variant`) the judge cannot make, out of memory say, is skipped."""
        bench = made(self.bench, "load")
        try:
            found = bench.prep(cmd["seed"], cmd.get("refill", False), cmd.get("keep"),
                               cmd.get("variant"))
        except Exception as exc:
            if not cmd.get("variant"):
                raise
            return {"skip": f"deriving it failed: {type(exc).__name__}: {str(exc)[:300]}"}
        return {"mutates": bool(found)}

    def go(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """One call; `tolerant` (inputs the judge derived, not the task's own draws): a
        failure or a non-finite output is a reason to skip the input, not a broken task."""
        fn = self.compiled if cmd["which"] == "compile" else self.model
        bench = made(self.bench, "load")
        try:
            dev_ms, host_ms, found = bench.go(fn)
        except Exception as exc:
            if not cmd.get("tolerant"):
                raise
            bench.last = None
            return {"skip": f"the task's Model raised {type(exc).__name__}: {str(exc)[:300]}"}
        if found:
            raise TypeError(f"the task's Model returns something the judge cannot compare: "
                            f"{found[0]}")
        last = bench.last
        assert last is not None  # `Bench.go` copied the outputs, or said why not in `found`
        reply = {"ms": dev_ms, "host_ms": host_ms, "leaves": describe(last),
                 "digest": bench.last_digest}
        if cmd.get("tolerant") and not finite(last[1]):
            bench.last = None
            reply["skip"] = "the task's Model returned non-finite values on it"
        return reply

    def finish(self, cmd: dict[str, Any]) -> dict[str, Any]:
        bench = made(self.bench, "load")
        return {"mutates": bool(bench.settle(cmd.get("keep"))), "memory_gib": bench.memory_gib()}

    def trim(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Give device memory back while idle (the last inputs and outputs, the allocator's
        cache): three processes share one GPU, and KernelBench inputs are gigabytes each."""
        bench = made(self.bench, "load")
        bench.release()
        made(self.burst, "load").release()
        if bench.device.type == "cuda":
            torch.cuda.empty_cache()
        return {"memory_gib": bench.memory_gib()}

    def compare(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Compare a kept output copy with the candidate's. No manifest is no output: the
        judge names the outputs it checks, so a candidate cannot leave one out. A copy
        whose digest is not the one its call committed to was changed after the call
        (`forged`). When the candidate's shared memory cannot be mapped, the copy stays
        for a retry. `parts_s`: mapping the copy, its digest, the values, the signal."""
        bench, clock = made(self.bench, "load"), Stopwatch()
        skeleton, leaves = bench.kept.pop(cmd["key"])
        if cmd["manifest"] is None:
            return {"mismatch": ["the candidate handed over no output for this call"]}
        ref = unflatten(skeleton, dict(leaves))
        try:
            with read_outputs(cmd["manifest"], bench.device) as cand:
                clock.lap("open")
                if manifest_digest(cmd["manifest"], cand) != cmd["digest"]:
                    return {"mismatch": ["its digest differs from the one committed when the "
                                         "call returned"], "forged": True}
                clock.lap("digest")
                reply: dict[str, Any] = {"mismatch": compare(ref, cand, cmd["atol"],
                                                             cmd["rtol"])}
                clock.lap("values")
                recorded = bool(cmd.get("signal")) and self._track(leaves, cand, cmd)
        except ipc.OpenFailed as exc:
            bench.kept[cmd["key"]] = skeleton, leaves  # for the comparison by files
            return {"mismatch": [f"the candidate's output could not be read: {exc}"],
                    "ipc_failed": str(exc)}
        except (KeyError, ValueError, TypeError, AttributeError) as exc:  # not the judge's
            return {"mismatch": [f"the candidate's output could not be read: {exc!r}"]}
        if cmd.get("signal"):
            # the noise call only after this output's copy is let go: on a task whose inputs
            # are gigabytes, that copy beside the call's inputs and output was the reference
            # process's largest hold (four times the input, now three)
            del ref, leaves, cand
            if recorded and cmd["signal"]["trial"] == 0:
                self._measure_noise(cmd["signal"]["seed"])
            stale = self.signal.stale() if recorded and reply["mismatch"] else None
            reply.update({} if stale is None else {"stale": stale})
            clock.lap("signal")
        return {**reply, "parts_s": clock.parts}

    def _track(self, leaves: list[Any], cand: Any, cmd: dict[str, Any]) -> bool:
        """Samples for the signal check (see `signal`); whether this output was recorded."""
        info = cmd["signal"]
        if info["trial"] == 0:
            self.signal.reset(info["seed"])
        try:
            cand_leaves = [t for _, t in flatten(cand)[1]]
        except TypeError:
            return False
        if len(cand_leaves) != len(leaves):
            return False
        self.signal.record([t for _, t in leaves], cand_leaves, info["fresh"])
        return True

    def _measure_noise(self, seed: int) -> None:
        """One more call, on this trial's inputs moved by a few ulps (see `signal.perturbed`):
        how much the reference's output moves by rounding alone. Where that call cannot be
        made (out of device memory, say), the check goes without it."""
        bench = made(self.bench, "load")
        try:
            inputs = perturbed(bench.inputs, seed)
            out = [t for _, t in flatten(self.model(*inputs))[1]]
        except (RuntimeError, TypeError):
            if bench.device.type == "cuda":
                torch.cuda.empty_cache()
            return
        del inputs
        self.signal.measure_noise(out)

    def signal_findings(self, cmd: dict[str, Any]) -> dict[str, Any]:
        return {"findings": self.signal.findings(cmd["rtol"], cmd.get("scale", True))}

