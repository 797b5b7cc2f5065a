"""Source of a self-contained `class Model` generated from a torch.fx trace of a submodule.

The trace keeps torch's own layers (nn.Linear, nn.LayerNorm, ...) as calls, so they are
re-created from their constructor arguments; parameters the trace reads directly get the real
shapes and dtypes (values drawn like the real ones: the judge loads its own weights into
both sides anyway); small buffers (masks, tables) are embedded with their exact values.
Anything the generated file cannot name without the user's code raises `NotStandalone`.
"""

from __future__ import annotations

import ast
import base64
import types
from typing import Any

import torch
import torch.fx

MAX_EMBEDDED = 1 << 16  # buffer elements written into the file
_PRELUDE = ("import base64\nimport math\nimport operator\n\nimport torch\nimport torch.nn as nn\n"
            "import torch.utils._pytree as pytree\nimport torch.fx._pytree as fx_pytree\n"
            "from torch import device\n\ninf, nan, NoneType = math.inf, math.nan, type(None)\n")
_KNOWN_GLOBALS = {"inf", "nan", "NoneType", "torch", "device", "fx_pytree", "pytree",
                  "getattr", "operator", "math", "__builtins__"}


class NotStandalone(Exception):
    """The submodule cannot be written as a file that runs without the user's code."""


class Sizes:
    """Constructor arguments, KernelBench style: each size (an int of 2 or more given to a
    torch layer by keyword, or a dimension of a loose parameter) becomes an argument of
    `Model.__init__`, named after the first keyword it was given as; `get_init_inputs()`
    returns the recorded values. Disabled, every size stays a literal."""

    _RESERVED = {"self", "torch", "nn", "device", "inf", "nan", "math", "operator", "base64",
                 "pytree", "fx_pytree", "NoneType", "_tensor"}

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.names: dict[int, str] = {}

    def name(self, value: int, hint: str) -> str:
        if value not in self.names:
            taken = set(self.names.values()) | self._RESERVED
            name, n = hint, 2
            while name in taken:
                name, n = f"{hint}_{n}", n + 1
            self.names[value] = name
        return self.names[value]

    def layer(self, source: str) -> str:
        if not self.enabled:
            return source
        tree = ast.parse(source, mode="eval")
        if not isinstance(tree.body, ast.Call):
            return source  # no constructor call, so no keyword to name
        for kw in tree.body.keywords:
            value = getattr(kw.value, "value", None)
            if kw.arg and type(value) is int and value >= 2:
                kw.value = ast.Name(self.name(value, kw.arg))
        return ast.unparse(tree)

    def shape(self, shape: tuple[int, ...]) -> str:
        dims = [self.name(d, "size") if self.enabled and d >= 2 else str(d) for d in shape]
        return f"({', '.join(dims)}{',' if len(dims) == 1 else ''})"


def traced_source(module: torch.nn.Module, parametrize: bool = True) -> tuple[str, list[int]]:
    """Everything of the task file but the header and get_inputs/get_init_inputs, and the
    values get_init_inputs() returns."""
    try:
        gm = torch.fx.symbolic_trace(module)
    except Exception as exc:  # noqa: BLE001 - any trace failure means: import the user's code
        raise NotStandalone(f"torch.fx cannot trace it ({type(exc).__name__}: "
                            f"{str(exc).splitlines()[0] if str(exc) else ''})") from exc
    code = gm.graph.python_code("self")
    imports = _imports(code.globals)
    sizes = Sizes(parametrize)
    init = _init_lines(gm, module, sizes)
    body = code.src.strip("\n").replace("def forward(", "    def forward(", 1)
    body = "\n".join(("    " + line.rstrip()) if i and line.strip() else line.rstrip()
                     for i, line in enumerate(body.split("\n")))
    helper = ("\n\ndef _tensor(data, dtype, shape):\n"
              "    raw = bytearray(base64.b64decode(data))\n"
              "    return torch.frombuffer(raw, dtype=dtype).reshape(shape).clone()\n")
    args = "".join(f", {name}" for name in sizes.names.values())
    return (_PRELUDE + imports + helper + f"\n\nclass Model(nn.Module):\n"
            f"    def __init__(self{args}):\n        super().__init__()\n"
            + "".join(f"        {x}\n" for x in init) + "\n" + body + "\n", list(sizes.names))


def _imports(found: dict[str, Any]) -> str:
    lines = []
    for name, value in found.items():
        if name in _KNOWN_GLOBALS:
            continue
        if isinstance(value, types.ModuleType) and value.__name__.split(".")[0] in ("torch",
                                                                                   "math"):
            lines.append(f"import {value.__name__} as {name}")
            continue
        owner = getattr(value, "__module__", None) or ""
        qual = getattr(value, "__qualname__", "")
        if owner.split(".")[0] in ("torch", "math", "operator", "builtins") and "." not in qual:
            lines.append(f"from {owner} import {qual} as {name}")
            continue
        raise NotStandalone(f"its traced code calls {owner}.{qual or name}, which is not torch")
    return "".join(line + "\n" for line in lines)


def _init_lines(gm: torch.fx.GraphModule, original: torch.nn.Module,
                sizes: Sizes) -> list[str]:
    lines: list[str] = []
    made: set[str] = {""}
    leaves: set[str] = set()
    targets = [(n.op, n.target) for n in gm.graph.nodes if n.op in ("call_module", "get_attr")]
    targets.sort(key=lambda t: t[0] != "call_module")  # layers first, then loose tensors
    state = original.state_dict()
    for op, target in dict.fromkeys(targets):
        owner = target.rpartition(".")[0]
        if any(target.startswith(leaf + ".") for leaf in leaves):
            continue  # a tensor of a layer already re-created
        lines += _containers(owner, made)
        if op == "call_module":
            lines.append(f"self.{target} = {_layer(gm.get_submodule(target), sizes)}")
            leaves.add(target)
        else:
            lines.append(_tensor_line(target, _attr(gm, target), target in state, sizes))
    return lines


def _containers(owner: str, made: set[str]) -> list[str]:
    out, parts = [], owner.split(".") if owner else []
    for i in range(1, len(parts) + 1):
        prefix = ".".join(parts[:i])
        if prefix not in made:
            made.add(prefix)
            out.append(f"self.{prefix} = nn.Module()")
    return out


def _layer(layer: torch.nn.Module, sizes: Sizes) -> str:
    """`nn.X(<extra_repr>)`: for torch's layers the repr is their constructor's arguments;
    checked by building it and comparing parameter shapes."""
    cls = type(layer)
    if not cls.__module__.startswith("torch.nn") or list(layer.children()):
        raise NotStandalone(f"{cls.__module__}.{cls.__name__} is kept as a call by the trace")
    source = f"nn.{cls.__name__}({layer.extra_repr()})"
    try:
        rebuilt = eval(source, {"nn": torch.nn, "torch": torch})  # noqa: S307 - our own text
    except Exception as exc:  # noqa: BLE001
        raise NotStandalone(f"cannot rebuild {source}: {exc}") from exc
    want = {k: (v.shape, v.dtype) for k, v in layer.state_dict().items()}
    got = {k: (v.shape, v.dtype) for k, v in rebuilt.state_dict().items()}
    dtypes = {dtype for _, dtype in want.values()}
    if len(dtypes) > 1 or {k: s for k, (s, _) in want.items()} != {k: s for k, (s, _) in
                                                                  got.items()}:
        raise NotStandalone(f"{source} does not rebuild the layer's parameters")
    source = sizes.layer(source)
    if dtypes and dtypes != {torch.get_default_dtype()}:
        source += f".to({dtypes.pop()})"
    if not layer.training:
        source += ".eval()"
    return source


def _attr(gm: torch.fx.GraphModule, target: str) -> Any:
    owner, _, name = target.rpartition(".")
    return getattr(gm.get_submodule(owner) if owner else gm, name)


def _tensor_line(target: str, value: Any, persistent: bool, sizes: Sizes) -> str:
    owner, _, name = target.rpartition(".")
    where = f"self.{owner}" if owner else "self"
    if isinstance(value, torch.nn.Parameter):
        data = value.detach().float()
        mean = round(float(data.mean()), 6) if data.numel() else 0.0
        std = round(float(data.std()), 6) if data.numel() > 1 else 0.0
        shape = sizes.shape(tuple(value.shape))
        draw = (f"torch.full({shape}, {mean!r})" if std == 0 else
                f"torch.randn({shape}) * {std!r} + {mean!r}")
        return (f"{where}.{name} = nn.Parameter(({draw}).to({value.dtype}), "
                f"requires_grad={value.requires_grad})")
    if not isinstance(value, torch.Tensor):
        raise NotStandalone(f"it reads {target}, a {type(value).__name__}")
    if value.numel() > MAX_EMBEDDED:
        raise NotStandalone(f"buffer {target} has {value.numel()} elements, too many to embed")
    encoded = base64.b64encode(value.detach().cpu().contiguous().view(-1).view(torch.uint8)
                               .numpy().tobytes()).decode()
    return (f"{where}.register_buffer({name!r}, _tensor({encoded!r}, {value.dtype}, "
            f"{tuple(value.shape)}), persistent={persistent})")
