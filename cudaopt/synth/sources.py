"""Where candidate tasks come from: random compositions of catalogue operators, or a
language model (see `llm`). Both hand the runner a `Candidate` that the same filters judge."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from cudaopt.synth.codegen import render, task_name
from cudaopt.synth.compose import rng_for, sample
from cudaopt.synth.shapes import Composition, resize_batch, size_batch, trace
from cudaopt.synth.steps import Rejected, step


@dataclass
class Candidate:
    ops: list[str]  # catalogue ids, in the order the forward applies them
    source: str | None  # the task file; None when nothing type-checked
    origin: str  # "random" or the model's name
    shapes: dict[str, Any] = field(default_factory=dict)
    note: str = ""  # why there is no source
    rejected: str = "typechecks"  # the step that gave no source
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
        """A composition that fails sizing or building comes back without a source, named
        after that step, as one that does not type-check does."""
        comp: Composition | None = None
        try:
            with step("typechecks"):
                comp = sample(self.catalog, rng_for(self.seed, attempt), self.max_ops,
                              self.weights)
            if comp is None:
                raise Rejected("typechecks", "no operator chain type-checked")
            with step("sizing"):
                batch = size_batch(comp, self.ops, self.cost, self.window_ms, self.factors)
            return self._at(comp, batch, attempt)
        except Rejected as exc:
            return Candidate([s.op for s in comp.steps] if comp else [], None, "random",
                             note=exc.error, rejected=exc.step)

    def _at(self, comp: Composition, batch: int, attempt: int) -> Candidate:
        with step("building"):
            traced = trace(comp, self.ops, batch)
        ops = [s.op for s in comp.steps]
        doc = (f"{', then '.join(ops)}. Synthesized by `cudaopt synth` (seed {self.seed}, "
               f"attempt {attempt}).")

        def resize(measured_ms: float) -> Candidate | None:
            with step("sizing"):
                new = resize_batch(comp, self.ops, self.cost, self.window_ms, self.factors,
                                   batch, measured_ms)
            return None if new == batch else self._at(comp, new, attempt)

        with step("building"):
            source = render(traced, doc)
        return Candidate(ops, source, "random",
                         {"inputs": traced.inputs, "outputs": [traced.layers[-1].out]},
                         resize=resize)
