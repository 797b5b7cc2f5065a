"""Where candidate tasks come from: random compositions of catalogue operators, or a
language model (see `llm`). Both hand the runner a `Candidate` that the same filters judge."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from cudaopt.synth.codegen import render, task_name
from cudaopt.synth.compose import rng_for, sample
from cudaopt.synth.shapes import Composition, resize_batch, size_batch, trace


@dataclass
class Candidate:
    ops: list[str]  # catalogue ids, in the order the forward applies them
    source: str | None  # the task file; None when nothing type-checked
    origin: str  # "random" or the model's name
    shapes: dict[str, Any] = field(default_factory=dict)
    note: str = ""  # why there is no source
    #: Given the eager ms measured, the same composition sized again for the window; None
    #: when the batch stays; absent where the source cannot resize (a model's task).
    resize: Callable[[float], Candidate | None] | None = None

    @property
    def name(self) -> str:
        return task_name(self.ops) if self.ops else "none"


class Source(Protocol):
    def propose(self, attempt: int, kept: list[str]) -> Candidate:
        """Candidate number `attempt` (a pure function of the seed and attempt for random
        compositions); `kept` names the tasks kept so far."""
        ...


class RandomSource:
    def __init__(self, catalog: list[dict[str, Any]], conf: dict[str, Any], seed: int,
                 max_ops: int, device: str, window_ms: tuple[float, float],
                 factors: dict[str, list[float]]) -> None:
        self.catalog, self.ops = catalog, {op["id"]: op for op in catalog}
        self.weights, self.cost = conf["ops_weights"], conf["cost"][device]
        self.seed, self.max_ops, self.window_ms = seed, max_ops, window_ms
        self.factors = factors

    def propose(self, attempt: int, kept: list[str]) -> Candidate:
        comp = sample(self.catalog, rng_for(self.seed, attempt), self.max_ops, self.weights)
        if comp is None:
            return Candidate([], None, "random", note="no operator chain type-checked")
        batch = size_batch(comp, self.ops, self.cost, self.window_ms, self.factors)
        return self._at(comp, batch, attempt)

    def _at(self, comp: Composition, batch: int, attempt: int) -> Candidate:
        traced = trace(comp, self.ops, batch)
        ops = [step.op for step in comp.steps]
        doc = (f"{', then '.join(ops)}. Synthesized by `cudaopt synth` (seed {self.seed}, "
               f"attempt {attempt}).")

        def resize(measured_ms: float) -> Candidate | None:
            new = resize_batch(comp, self.ops, self.cost, self.window_ms, self.factors, batch,
                               measured_ms)
            return None if new == batch else self._at(comp, new, attempt)

        return Candidate(ops, render(traced, doc), "random",
                         {"inputs": traced.inputs, "outputs": [traced.layers[-1].out]},
                         resize=resize)
