"""KernelBench task files from traced compositions (the skeleton is
`templates/synth/task.py.tmpl`): layers with parameters take their sizes from
`get_init_inputs()`, inputs are drawn with `torch.rand` on the default device, as
KernelBench's own tasks do, so `check`, `optimize`, `bench` and `env serve` read them
unchanged."""

from __future__ import annotations

import re
from typing import Any

from cudaopt import TEMPLATES_DIR
from cudaopt.synth.shapes import Layer, Traced


def _template() -> str:
    return (TEMPLATES_DIR / "synth" / "task.py.tmpl").read_text()


def short_name(op_id: str) -> str:
    """What a file name calls an operator: Conv2d, relu, gelu."""
    return op_id.split(".", 1)[-1]


def task_name(op_ids: list[str]) -> str:
    """The operators, in order, as a file name: `Conv2d_relu_sum`."""
    return re.sub(r"\W", "_", "_".join(short_name(op) for op in op_ids))[:120]


def _attr(index: int, layer: Layer) -> str:
    return f"{re.sub(r'(?<!^)(?=[A-Z])', '_', short_name(layer.op['id'])).lower()}{index}"


def expression(layer: Layer, extra: str | None) -> str:
    """The call of one function step (see `shapes.call`, which runs the same on meta)."""
    fn = layer.op["id"]
    if layer.op["form"] == "dim":
        return f"{fn}(x, dim={layer.step.args['dim']})"
    return f"{fn}(x, {extra})" if extra else f"{fn}(x)"


def render(traced: Traced, doc: str) -> str:
    init_params: list[str] = []
    init_values: list[Any] = []
    init_body, forward_body, extras = [], [], []
    for i, layer in enumerate(traced.layers):
        if layer.op["kind"] == "module":
            names = [f"{name}{i}" for name in layer.init]
            init_params += names
            init_values += list(layer.init.values())
            args = ", ".join(f"{k}={n}" for k, n in zip(layer.init, names, strict=True))
            init_body.append(f"        self.{_attr(i, layer)} = {layer.op['id']}({args})\n")
            forward_body.append(f"        x = self.{_attr(i, layer)}(x)\n")
        else:
            extra = f"y{i}" if layer.extra else None
            if extra:
                extras.append(extra)
            forward_body.append(f"        x = {expression(layer, extra)}\n")
    if len(forward_body) == 1:  # one operator: KernelBench level 1's `return op(x)` style
        forward_body[0] = forward_body[0].replace("x = ", "return ", 1)
    else:
        forward_body.append("        return x\n")
    batch = traced.inputs[0][0]
    inputs = [_rand(traced.inputs[0], batch)] + [_rand(s, batch) for s in traced.inputs[1:]]
    return _template().format(
        doc=doc, init_params="".join(f", {p}" for p in init_params),
        init_body="".join(init_body),
        forward_params=", ".join(["x", *extras]), forward_body="".join(forward_body),
        batch=batch, inputs=", ".join(inputs),
        init_inputs=", ".join(repr(v) for v in init_values))


def _rand(shape: list[int], batch: int) -> str:
    dims = ["batch_size" if i == 0 and size == batch else str(size)
            for i, size in enumerate(shape)]
    return f"torch.rand({', '.join(dims)})"
