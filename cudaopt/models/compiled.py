"""`check-model --compile MODE`: the swapped model judged as users run it, compiled.

Two questions, answered apart. Speed: the whole-model candidate compiles its swapped model
with MODE and the judge compiles the original with MODE, so the judge's speedup vs
torch.compile is compiled against compiled, under `check`'s protocol (fresh inputs,
interleaved rounds). Health: dynamo's own account of the swapped model, in this process, on
fresh draws of the inputs: how many graphs, graph breaks (and why), and recompiles after
the first call; a kernel left as a plain call shows up here as a break.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

CALLS = 3  # fresh draws after the first call; each new compile among them is a recompile


@dataclass
class Health:
    graphs: int
    graph_breaks: int
    recompiles: int
    reasons: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"graphs": self.graphs, "graph_breaks": self.graph_breaks,
                "recompiles": self.recompiles, "break_reasons": self.reasons}

    def line(self) -> str:
        why = f" ({'; '.join(self.reasons[:3])})" if self.reasons else ""
        return (f"under torch.compile the swapped model is {self.graphs} graph(s), "
                f"{self.graph_breaks} graph break(s){why}, {self.recompiles} recompile(s) "
                f"over {CALLS} calls on fresh inputs")


def health(model: torch.nn.Module, draw: Callable[[], list[Any]]) -> Health:
    """Graphs and breaks from `torch._dynamo.explain`, recompiles from a counting backend
    (dynamo's tracing only: no code is generated, so this takes seconds)."""
    import torch._dynamo

    torch._dynamo.reset()
    with torch.no_grad():
        explained = torch._dynamo.explain(model)(*draw())
        compiles = []

        def count(gm: torch.fx.GraphModule, example: list[Any]) -> Callable[..., Any]:
            compiles.append(gm)
            return gm.forward

        compiled = torch.compile(model, backend=count)
        compiled(*draw())
        first = len(compiles)
        for _ in range(CALLS):
            compiled(*draw())
    torch._dynamo.reset()
    reasons = list(dict.fromkeys(str(b.reason).splitlines()[0]
                                 for b in explained.break_reasons))
    return Health(explained.graph_count, explained.graph_break_count, len(compiles) - first,
                  reasons)


def drawer(get_inputs_source: str, device: str) -> Callable[[], list[Any]]:
    """Fresh inputs like the ENTRY's, from the whole-model task's own `get_inputs`."""
    scope: dict[str, Any] = {"torch": torch}
    exec(get_inputs_source, scope)  # noqa: S102 - source written by specs.get_inputs_source

    def draw() -> list[Any]:
        return [x.to(device) if isinstance(x, torch.Tensor) else x
                for x in scope["get_inputs"]()]

    return draw


# Kept out of the state dict (the judge loads the original's weights by name). Compiling
# in-line, with no workers or progress monitor left running: the judge refuses a candidate
# whose threads outlive its forward, and the compile happens inside the first one.
COMPILING = """
        import torch._inductor.config as inductor_config
        from tqdm import tqdm

        inductor_config.compile_threads = 1
        tqdm.monitor_interval = 0
        self.__dict__["compiled"] = torch.compile(self.model, mode={mode!r})
"""
