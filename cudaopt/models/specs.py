"""What flows into a module: argument specs recorded on a real forward pass, and the
`get_inputs()` source that draws fresh arguments of the same shapes, dtypes and ranges."""

from __future__ import annotations

import inspect
from dataclasses import asdict, dataclass
from typing import Any

import torch


@dataclass
class ArgSpec:
    """A tensor (shape, dtype, value range or moments) or a plain literal (`value`)."""

    kind: str  # "tensor" | "literal"
    shape: list[int] | None = None
    dtype: str | None = None
    mean: float = 0.0
    std: float = 1.0
    low: float = 0.0
    high: float = 0.0
    value: Any = None

    def label(self) -> str:
        if self.kind == "literal":
            return repr(self.value)
        shape, dtype = self.tensor()
        return f"{dtype}{shape}".replace(" ", "")

    def tensor(self) -> tuple[list[int], str]:
        """Shape and dtype: `describe` sets both for a tensor, but a spec read back from
        JSON (`from_json`) may lack them."""
        if self.shape is None or self.dtype is None:
            raise ValueError(f"a {self.kind} spec without a shape and dtype: {self}")
        return self.shape, self.dtype

    def key(self) -> tuple:
        """What makes two calls interchangeable for a kernel: shapes, dtypes, literals."""
        return (self.kind, tuple(self.shape or ()), self.dtype, repr(self.value))


_LITERALS = (int, float, bool, str, type(None))


def describe(value: Any) -> ArgSpec:
    if isinstance(value, torch.Tensor):
        dtype = str(value.dtype).removeprefix("torch.")
        spec = ArgSpec("tensor", list(value.shape), dtype)
        if value.numel() and (value.is_floating_point() or value.is_complex()):
            data = value.detach().float()
            spec.mean = round(float(data.mean()), 6)
            spec.std = round(float(data.std()) if value.numel() > 1 else 0.0, 6)
        elif value.numel():
            spec.low, spec.high = float(value.min()), float(value.max())
        return spec
    if isinstance(value, _LITERALS) or (isinstance(value, tuple)
                                        and all(isinstance(v, _LITERALS) for v in value)):
        return ArgSpec("literal", value=value)
    raise TypeError(f"an argument of type {type(value).__name__} (only tensors and plain "
                    "literals can be drawn by get_inputs)")


def positional(module: torch.nn.Module, args: tuple, kwargs: dict) -> list[Any]:
    """The call's arguments as a positional list (KernelBench's get_inputs is positional)."""
    if not kwargs:
        return list(args)
    bound = inspect.signature(module.forward).bind(*args, **kwargs)
    bound.apply_defaults()
    out: list[Any] = []
    for name, value in bound.arguments.items():
        kind = inspect.signature(module.forward).parameters[name].kind
        if kind is inspect.Parameter.VAR_KEYWORD and value:
            raise TypeError(f"keyword arguments {sorted(value)} passed through **{name}")
        out.extend(value if kind is inspect.Parameter.VAR_POSITIONAL else
                   ([] if kind is inspect.Parameter.VAR_KEYWORD else [value]))
    return out


def draw_source(spec: ArgSpec) -> str:
    """An expression drawing a fresh value like the recorded one (under the judge's seed)."""
    if spec.kind == "literal":
        return repr(spec.value)
    dims, name = spec.tensor()
    shape, dtype = tuple(dims), f"torch.{name}"
    if name == "bool":
        return f"torch.rand({shape}) < 0.5"
    if name.startswith(("int", "uint")):
        return f"torch.randint({int(spec.low)}, {int(spec.high) + 1}, {shape}, dtype={dtype})"
    if spec.std == 0:
        return f"torch.full({shape}, {spec.mean!r}, dtype={dtype})"
    return f"(torch.randn({shape}) * {spec.std!r} + {spec.mean!r}).to({dtype})"


def get_inputs_source(specs: list[ArgSpec]) -> str:
    items = "".join(f"        {draw_source(s)},\n" for s in specs)
    return f"def get_inputs():\n    return [\n{items}    ]\n"


def to_json(specs: list[ArgSpec]) -> list[dict[str, Any]]:
    return [{k: v for k, v in asdict(s).items() if v is not None} for s in specs]


def from_json(items: list[dict[str, Any]]) -> list[ArgSpec]:
    return [ArgSpec(**item) for item in items]
