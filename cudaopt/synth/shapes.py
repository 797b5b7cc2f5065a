"""Shape and type propagation on meta tensors, and the batch size that puts a composition's
estimated eager time in the window.

A composition is a chain: each step takes the previous step's output (plus, for binary and
matmul steps, an extra input of its own). Running the chain on `meta` tensors checks that
it type-checks and gives every shape, constructor argument and FLOP count without
allocating or computing anything. Dimension 0 is the batch: every catalogue operator keeps
it, so scaling it scales the work and leaves every other shape constraint intact.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

from cudaopt.synth.catalog import build_init, resolve

#: The largest batch tried where the device's cost table names none (see `max_batch`).
MAX_BATCH = 1 << 16


@dataclass
class Step:
    op: str  # catalogue id: torch.relu, F.gelu, nn.Conv2d
    args: dict[str, int] = field(default_factory=dict)  # choices: dim, out, groups, cols


@dataclass
class Composition:
    steps: list[Step]
    shape: list[int]  # the primary input's shape; dimension 0 (the batch) is set by sizing


@dataclass
class Layer:
    step: Step
    op: dict[str, Any]
    init: dict[str, Any]  # constructor arguments of a module step
    extra: list[int] | None  # shape of the step's own extra input
    out: list[int]
    flops: int = 0
    bytes: int = 0


@dataclass
class Traced:
    layers: list[Layer]
    inputs: list[list[int]]  # the primary input, then each step's extra input
    flops: int
    bytes: int


def trace(comp: Composition, ops: dict[str, dict[str, Any]], batch: int) -> Traced:
    """Run the chain on meta tensors; raises whatever torch raises for a bad composition."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _trace(comp, ops, batch)


def _trace(comp: Composition, ops: dict[str, dict[str, Any]], batch: int) -> Traced:
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    x = torch.empty([batch, *comp.shape[1:]], device="meta")
    layers: list[Layer] = []
    inputs = [list(x.shape)]
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        for step in comp.steps:
            op, shape = ops[step.op], list(x.shape)
            init, extra, params = {}, None, 0
            if x.dim() not in op["ranks"]:
                raise TypeError(f"{step.op} does not take rank {x.dim()}")
            if op["kind"] == "module":
                init = build_init(op["init"], op["bind"], shape, step.args)
                with torch.device("meta"):
                    layer = resolve(step.op)(**init)
                y = layer(x)
                params = sum(p.numel() for p in layer.parameters())
            else:
                extra = _extra_shape(op, shape, step.args)
                y = call(op, x, step.args, torch.empty(extra, device="meta") if extra else None)
            if type(y) is not torch.Tensor or y.dim() < 1 or y.shape[0] != batch:
                raise TypeError(f"{step.op} gives no batched tensor for {shape}")
            if extra:
                inputs.append(extra)
            moved = (x.numel() + y.numel() + params + (_numel(extra) if extra else 0)) * 4
            flops = int(counter.get_total_flops()) - sum(layer.flops for layer in layers)
            layers.append(Layer(step, op, init, extra, list(y.shape), flops, moved))
            x = y
    return Traced(layers, inputs, sum(lay.flops for lay in layers),
                  sum(lay.bytes for lay in layers))


def call(op: dict[str, Any], x: Any, args: dict[str, int], extra: Any) -> Any:
    """One function step as the generated code spells it (see `codegen.expression`)."""
    fn = resolve(op["id"])
    if op["form"] == "dim":
        return fn(x, dim=args["dim"])
    return fn(x, extra) if extra is not None else fn(x)


def _extra_shape(op: dict[str, Any], shape: list[int], args: dict[str, int]) -> list[int] | None:
    if op["form"] == "same":
        return list(shape)
    if op["form"] == "matrix":
        return [shape[-1], args["cols"]]
    return None


def _numel(shape: list[int]) -> int:
    total = 1
    for size in shape:
        total *= size
    return total


def estimate_ms(traced: Traced, cost: dict[str, Any],
                factors: dict[str, list[float]]) -> float:
    """A roofline guess per step (FLOPs at the device's rate plus bytes moved), scaled by
    the operator's measured factor for the step's size (see `calibrate`), plus a cost per
    call."""
    return sum(_factor(factors.get(lay.step.op), lay.bytes, cost["calibrate_bytes"]) * 1e3 * (
        lay.flops / cost["flops_per_s"] + lay.bytes / cost["bytes_per_s"]) + cost["op_ms"]
        for lay in traced.layers)


def _factor(measured: list[float] | None, moved: int, sizes: list[int]) -> float:
    """Between the factors measured in cache and out of it, log-linear in bytes moved."""
    if not measured:
        return 1.0
    (small, large), (low, high) = measured, sizes
    share = min(max(math.log(max(moved, 1) / low) / math.log(high / low), 0.0), 1.0)
    return math.exp(math.log(small) * (1 - share) + math.log(large) * share)


def size_batch(comp: Composition, ops: dict[str, dict[str, Any]], cost: dict[str, Any],
               window_ms: tuple[float, float], factors: dict[str, list[float]],
               correction: float = 1.0) -> int:
    """The power-of-two batch whose estimate (times `correction`) is nearest the window's
    geometric middle, within the device's batch and memory caps. A pure function of its
    arguments, so the same seed gives the same files whatever the machine's load."""
    target = math.sqrt(window_ms[0] * window_ms[1])
    first = _smallest_batch(comp, ops, max_batch(cost))
    batch, best = first, (math.inf, first)
    while batch <= max_batch(cost):
        traced = trace(comp, ops, batch)
        if traced.bytes > cost["max_bytes"] and batch > first:
            break
        error = abs(math.log(correction * estimate_ms(traced, cost, factors) / target))
        best = min(best, (error, batch))
        batch *= 2
    return best[1]


def _smallest_batch(comp: Composition, ops: dict[str, dict[str, Any]], limit: int) -> int:
    """The smallest power-of-two batch the chain takes: a BatchNorm over `[1, C]` has one
    value per channel and refuses to train on it, while the same chain over `[2, C]` is a
    task. Raises what torch raised at `limit` when no batch up to it will do."""
    batch = 1
    while True:
        try:
            trace(comp, ops, batch)
            return batch
        except Exception:  # noqa: BLE001 - torch's refusal, whatever its type
            if batch * 2 > limit:
                raise
        batch *= 2


def resize_batch(comp: Composition, ops: dict[str, dict[str, Any]], cost: dict[str, Any],
                 window_ms: tuple[float, float], factors: dict[str, list[float]],
                 batch: int, measured_ms: float) -> int:
    """The batch again, the estimate corrected by how far it was from the time measured at
    `batch`: the estimate's shape (in cache or out of it) holds better than its scale, which
    on an H200 missed by more than tenfold."""
    guess = estimate_ms(trace(comp, ops, batch), cost, factors)
    return size_batch(comp, ops, cost, window_ms, factors, measured_ms / guess)


def max_batch(cost: dict[str, Any]) -> int:
    """A GPU needs batches a CPU never does: an elementwise chain over 1024 columns moves
    256 MiB at batch 65 536, a tenth of a millisecond on an H200."""
    return int(cost.get("max_batch", MAX_BATCH))
