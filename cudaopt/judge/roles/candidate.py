"""The candidate worker: imports `model_new.py` and runs `ModelNew` under the judge's rules.

Everything it reports about correctness is raw output bytes for the reference worker to
compare; it never sees a reference output, so it cannot copy one. What it checks itself
(operators, input mutation, tampering, threads) uses functions captured, and a snapshot
taken, before the candidate was imported.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from cudaopt.judge.building.extdir import use_content_dir
from cudaopt.judge.building.loading import build_model, load_module, use_threads
from cudaopt.judge.checks import streams
from cudaopt.judge.checks.guard import OpGuard
from cudaopt.judge.checks.integrity import Integrity
from cudaopt.judge.roles import made
from cudaopt.judge.timing import pinning
from cudaopt.judge.timing.bench import Bench, same_layout
from cudaopt.judge.timing.burst import Burst
from cudaopt.judge.workers.digest import digest
from cudaopt.judge.workers.tensors import (
    Snapshot,
    draw_inputs,
    dtype_named,
    fingerprint,
    flatten,
)
from cudaopt.judge.workers.transfer import write_outputs

_perf = time.perf_counter
_threads = torch.get_num_threads


class CandidateWorker:
    def __init__(self, boot: dict[str, float] | None = None) -> None:
        self.boot = boot or {}  # its start-up, reported with the import (see `import_`)
        self.model: Any = None
        self.allow: tuple[str, ...] = ()
        self.bench: Bench | None = None
        self.burst: Burst | None = None
        self.integrity: Integrity | None = None
        self.published: dict[str, Snapshot] = {}
        self.threads: int | None = None
        self.staged: dict[str, torch.Tensor] | None = None  # the weights, read ahead

    def handlers(self) -> dict[str, Any]:
        return {"import": self.import_, "stage": self.stage, "load": self.load,
                "prep": self.prep, "go": self.go, "finish": self.finish, "dump": self.dump,
                "streams": self.streams, "burst": self.burst_ready, "burst_go": self.burst_go,
                "burst_end": self.burst_end,
                "stale_probe": self.stale_probe, "exit": lambda cmd: {},
                "pin": lambda cmd: pinning.handle(cmd, made(self.bench, "import").device)}

    def import_(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """The task and the candidate imported (`load_inline` builds happen here), while the
        reference worker builds the task's model and saves the weights `load` needs. The
        reply's `parts_s` (this process's start-up and the judge's own steps before the
        candidate's import) say where a slow import's wait went; they come from the
        candidate's process, so they describe and never decide."""
        started = _perf()
        self.allow = tuple(cmd["allow"])
        self.threads = cmd.get("threads")
        use_threads(self.threads)
        task = load_module(Path(cmd["task"]), "cudaopt_task")
        self.init_inputs = list(task.get_init_inputs())
        tasked = _perf()
        self.bench = Bench(task, torch.device(cmd["device"]))
        self.burst = Burst(self.bench)
        self._snapshot(self.bench)
        if cmd.get("build_dir"):
            sys.path.insert(0, cmd["build_dir"])
        use_content_dir(Path(cmd["candidate"]))
        start = _perf()
        parts = {**self.boot, "task": tasked - started, "bench": start - tasked}
        try:
            self.module = load_module(Path(cmd["candidate"]), "model_new")
        except Exception as exc:
            failed_build = "Error building extension" in str(exc)
            return {"ok": False, "kind": "build" if failed_build else "import",
                    "error": _short_error(exc)}
        return {"import_s": _perf() - start, "parts_s": parts}

    def stage(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """The reference's weights read into host memory (page-locked for a GPU) before the
        judge takes the GPU's turn for `load`, which then only copies them: reading a
        multi-GiB file under the turn kept every other judgement on the GPU waiting."""
        state = torch.load(cmd["state_path"], map_location="cpu", weights_only=True)
        if made(self.bench, "import").device.type == "cuda":
            state = {name: tensor.pin_memory() for name, tensor in state.items()}
        self.staged = state
        return {}

    def load(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """The candidate's model, built under the reference's seed, given its weights (the
        judge holds the GPU's turn meanwhile: `JudgePool.candidate_turn`)."""
        device = made(self.bench, "import").device
        model = build_model(self.module.ModelNew, self.init_inputs, cmd["init_seed"], device)
        state, self.staged = self.staged, None
        if state is None:
            state = torch.load(cmd["state_path"], map_location=device, weights_only=True)
        try:
            model.load_state_dict(state, strict=True)
        except RuntimeError as exc:
            return {"ok": False, "kind": "state_dict", "error": _state_dict_message(exc)}
        self.model = model
        integrity = made(self.integrity, "import")
        integrity.loaded()
        return {"violations": integrity.violations()}

    def _snapshot(self, bench: Bench) -> None:
        """What must not change once the candidate is imported (see `integrity`)."""
        judge = [m for name, m in sys.modules.items() if name.startswith("cudaopt.judge")]
        self.integrity = Integrity(judge)
        self.integrity.watch("worker", self, ("bench", "burst", "integrity", "allow", "threads",
                                              "init_inputs"))
        self.integrity.watch("bench", bench, ("timer", "task", "device", "kept"))
        self.integrity.watch("timer", bench.timer, ("device", "cuda", "_flush_buf"))

    def prep(self, cmd: dict[str, Any]) -> dict[str, Any]:
        self.published = {}
        bench = made(self.bench, "import")
        found = bench.prep(cmd["seed"], cmd.get("refill", False), cmd.get("keep"),
                           cmd.get("variant"))
        _poison(cmd.get("poison") or [], bench.device)
        return {"violations": found}

    def go(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """One call; guarded calls run under the operator guard (and are not timed)."""
        guard = OpGuard(self.allow) if cmd.get("guard") else None
        fn = self.model if guard is None else _guarded(self.model, guard)
        bench = made(self.bench, "import")
        dev_ms, host_ms, found = bench.go(fn)
        found = (guard.violations() if guard else []) + found
        return {"ms": dev_ms, "host_ms": host_ms, "violations": found,
                "output": bench.last is not None, "digest": bench.last_digest}

    def stale_probe(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """After a timed call's output was wrong, two calls off the clock: on inputs drawn
        from one seed, then on the same tensors refilled from another. The same output bytes
        for both is a result kept from an earlier call (keyed on the tensor, its pointer or
        its shape). Only the verdict's wording rests on this reply; the refusal does not."""
        outputs = []
        bench = made(self.bench, "import")
        try:
            for i, seed in enumerate(cmd["seeds"]):
                bench.prep(seed, i > 0, None)
                leaves = flatten(self.model(*bench.inputs))[1]
                outputs.append([t.detach().clone() for _, t in leaves])
        except Exception:  # noqa: BLE001 - a candidate that cannot be probed is not named
            return {"same": False}
        first, second = outputs
        return {"same": len(first) == len(second) > 0 and all(
            a.shape == b.shape and a.dtype == b.dtype and streams.same_bytes(a, b)
            for a, b in zip(first, second, strict=True))}

    def streams(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """The stream-ordering checks on the prepared inputs (see `streams`): the snapshot
        first, while the process is known to be sound, then the graph capture (a failed one
        can leave the candidate's streams unusable, so nothing runs in this process after
        it). A replay's outputs, on inputs refilled from `seed`, become the call's outputs."""
        bench = made(self.bench, "import")
        returned: set[int] = set()  # storage of every output these calls returned
        raced = streams.snapshot_race(self.model, bench.inputs, bench.device, returned)
        found = [f"{streams.RULE}: its output changed after the current stream had finished "
                 "the call"] if raced else []
        fresh = draw_inputs(bench.task, cmd["seed"], bench.device)
        l2_bytes = bench.l2_persisting_bytes
        if not same_layout(bench.inputs, fresh):
            return {"check": "snapshot", "replayed": False, "violations": found,
                    "why": "the task draws inputs of other shapes each time",
                    "l2_persisting_bytes": l2_bytes}
        # the replay's inputs are in place before the capture (which runs nothing): the
        # fresh draw is gone before the graph's pool takes memory
        streams.refill(bench.inputs, fresh)
        bench.prints = fingerprint(bench.inputs)  # refilled by the judge, not the candidate
        del fresh
        graph, out, why = streams.capture(self.model, bench.inputs, bench.device)
        if graph is None:
            if streams.UNJOINED in why.lower():
                found.append(f"{streams.RULE}: capturing forward into a CUDA graph failed "
                             f"with {why}")
            return {"check": "graph" if streams.UNJOINED in why.lower() else "snapshot",
                    "replayed": False, "why": why, "violations": found,
                    "l2_persisting_bytes": l2_bytes}
        stale = streams.returned_before(out, bench.inputs, returned)
        bench.last = streams.replay(graph, out, bench.inputs, bench.device)
        del graph, out
        return {"check": "graph", "replayed": True, "violations": found, "stale": stale,
                "l2_persisting_bytes": l2_bytes,
                "digest": digest(bench.last[0], dict(bench.last[1]))}

    def burst_ready(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """The inputs of back-to-back calls and their warm-up call (see `burst`)."""
        self.published = {}
        return made(self.burst, "import").ready(self.model, cmd)

    def burst_go(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Back-to-back calls, unguarded like most timed calls; every call's outputs are
        copied for the parent to check (tampering is looked for by `burst_end`)."""
        return made(self.burst, "import").go(self.model, cmd)

    def burst_end(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Tampering looked for after a burst, in a request of its own: the judge's clock
        around `burst_go` is compared with the baselines', which make no such check."""
        return {"violations": made(self.integrity, "import").violations()}

    def finish(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """End of a sequence of calls: settle the last one and look for tampering."""
        bench = made(self.bench, "import")
        found = bench.settle(cmd.get("keep")) + made(self.integrity, "import").violations()
        if self.threads and _threads() != self.threads:
            found.append(f"the candidate changed torch's thread count from {self.threads} to "
                         f"{_threads()} (the baselines run with {self.threads})")
        return {"violations": found, "memory_gib": bench.memory_gib()}

    def dump(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Publish the kept output copies named for the reference worker to compare; forget
        the rest. Published copies live until the next call is prepared, as the reference
        may map their memory; `again` publishes the same ones again (as files, after IPC
        failed)."""
        kept = made(self.bench, "import").kept
        if not cmd.get("again"):
            self.published = {key: kept[key] for key in cmd["keys"] if key in kept}
        kept.clear()
        out_dir, share = Path(cmd["out_dir"]), cmd.get("share", False)
        return {"manifests": {key: write_outputs(snap, out_dir, key, share)
                              for key, snap in self.published.items()}}


def _guarded(model: Callable[..., Any], guard: OpGuard) -> Callable[..., Any]:
    def call(*inputs: Any) -> Any:
        with guard:
            return model(*inputs)

    return call


def _poison(leaves: list[dict[str, Any]], device: torch.device) -> None:
    """Fill and free blocks the size of each expected output, so an output buffer the
    candidate allocates but never writes holds NaN (or extreme integers), not stale data."""
    for leaf in leaves:
        dtype = dtype_named(leaf["dtype"])
        block = torch.empty(leaf["numel"], dtype=dtype, device=device)
        if dtype.is_floating_point or dtype.is_complex:
            block.fill_(float("nan"))
        elif dtype != torch.bool:
            block.fill_(torch.iinfo(dtype).max)
        del block


def _short_error(exc: BaseException) -> str:
    import traceback

    return "".join(traceback.format_exception(exc))[-6000:]


def _state_dict_message(exc: RuntimeError) -> str:
    return ("ModelNew's parameters and buffers must match Model's so the reference weights load "
            f"(load_state_dict strict=True): {exc}")
