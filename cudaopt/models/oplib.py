"""Kernel functions of an extension module as `torch.library` custom ops.

A pybind function is opaque to torch.compile (a graph break at every call) and torch.export
cannot carry it at all. Registered as `torch.ops.<namespace>.<name>` with a fake (meta)
implementation, the same function is one node in the graph: `fullgraph=True` holds, CUDA
graphs capture it and an exported program keeps it. A spec (plain JSON, made by `derive`)
gives the schema and how each output's shape follows from the inputs.

Generated whole-model candidates embed this module's text, so it runs where cudaopt is not
importable. Keep it free of cudaopt imports.
"""

import types

import torch

_LIBS: dict[str, torch.library.Library] = {}  # by namespace: kept alive, or the ops are dropped
_DTYPES = {str(d).removeprefix("torch."): d for d in vars(torch).values()
           if isinstance(d, torch.dtype)}


class NotRegistrable(Exception):
    """A kernel function whose calls do not say how to describe it to torch.compile."""


def arg_type(value):
    """The schema type of one recorded argument."""
    if isinstance(value, torch.Tensor):
        return "Tensor"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "SymInt"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, torch.Tensor)
                                                          for v in value):
        return "Tensor[]"
    if isinstance(value, (list, tuple)) and all(type(v) is int for v in value):
        return "SymInt[]"
    raise NotRegistrable(f"it takes a {type(value).__name__} argument, which a schema "
                         "cannot name")


def schema(spec):
    """`(Tensor a0, Tensor(a!) a1, float a2) -> Tensor` from a spec."""
    args = []
    for i, kind in enumerate(spec["args"]):
        mark = f"(a{i}!)" if i in spec["mutates"] else ""
        args.append(f"{kind}{mark} a{i}")
    outs = ["Tensor"] * len(spec["outputs"])
    ret = "()" if spec["returns"] == "none" else outs[0] if spec["returns"] == "tensor" \
        else f"({', '.join(outs)})"
    return f"({', '.join(args)}) -> {ret}"


def _fake(spec):
    """The fake implementation: empty outputs whose sizes follow the recorded relations."""

    def fake(*args):
        first = next(a for a in args if isinstance(a, torch.Tensor))
        outs = []
        for out in spec["outputs"]:
            if out["like"] is not None:
                outs.append(torch.empty_like(args[out["like"]]))
                continue
            dims = [args[j].shape[k] if kind == "dim" else args[j] if kind == "int" else j
                    for kind, j, k in out["dims"]]
            outs.append(first.new_empty(dims, dtype=_DTYPES[out["dtype"]]))
        return None if spec["returns"] == "none" else outs[0] if spec["returns"] == "tensor" \
            else tuple(outs)

    return fake


def register(namespace, name, fn, spec):
    """`torch.ops.<namespace>.<name>` calling `fn`, described by `spec`; registering the
    same name again (the same kernel swapped twice) returns the first registration."""
    lib = _LIBS.get(namespace)
    if lib is None:
        lib = _LIBS[namespace] = torch.library.Library(namespace, "FRAGMENT")
    packet = getattr(torch.ops, namespace)
    if not hasattr(packet, name):
        lib.define(name + schema(spec))
        lib.impl(name, _impl(fn, spec), "CompositeExplicitAutograd")
        torch.library.register_fake(f"{namespace}::{name}", _fake(spec), lib=lib)
    return getattr(packet, name)


def _impl(fn, spec):
    if spec["returns"] == "tuple":
        return lambda *args: tuple(fn(*args))
    if spec["returns"] == "none":
        return lambda *args: (fn(*args), None)[1]
    return fn


def extensions(module):
    """The compiled extension modules `module` holds as globals (`import cuda_extension`,
    the result of `load_inline`), by global name."""
    return {name: value for name, value in vars(module).items()
            if isinstance(value, types.ModuleType)
            and str(getattr(value, "__file__", "") or "").endswith((".so", ".pyd"))}


def install(module, namespace, specs):
    """Register every function of `specs` ({global: {function: spec}}) found in `module`'s
    extensions and point those globals at a stand-in whose functions are the custom ops
    (functions without a spec stay the extension's own). Returns the qualified op names."""
    names = []
    for glob, ext in extensions(module).items():
        table = {}
        for fname, spec in (specs.get(glob) or {}).items():
            table[fname] = register(namespace, fname, getattr(ext, fname), spec)
            names.append(f"{namespace}::{fname}")
        if table:
            setattr(module, glob, stand_in(ext, table))
    return names


def stand_in(ext, table):
    """A module standing in for `ext`: its functions, the registered ones replaced."""
    proxy = types.ModuleType(ext.__name__, getattr(ext, "__doc__", None))
    proxy.__dict__.update({k: v for k, v in vars(ext).items() if not k.startswith("__")})
    proxy.__dict__.update(table)
    return proxy
