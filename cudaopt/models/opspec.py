"""From recorded calls of a kernel function to the spec `oplib` registers it with.

A fake implementation must give each output's shape from the arguments alone. The calls
recorded on a task's inputs say which input dimension (or integer argument) each output
dimension equals; a dimension that equals none of them and differs between calls of the
same input shapes depends on the data, and nothing describes it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from cudaopt.models.oplib import NotRegistrable, arg_type


@dataclass
class Call:
    fn: Callable[..., Any]
    args: tuple  # as given, cloned before the call
    result: Any
    mutated: set[int]  # positions of tensor arguments the call wrote into
    why_not: str | None = None  # what about this call no schema can describe

    @classmethod
    def make(cls, fn: Callable[..., Any], args: tuple, kwargs: dict) -> Call:
        """Call `fn`, noting which tensor arguments it changed and whether it returned one
        of them (a custom op's outputs must be new tensors)."""
        before = tuple(a.detach().clone() if isinstance(a, torch.Tensor) else a for a in args)
        result = fn(*args, **kwargs)
        mutated = {i for i, (a, b) in enumerate(zip(args, before, strict=True))
                   if isinstance(a, torch.Tensor) and not _same(a, b)}
        ptrs = {a.untyped_storage().data_ptr() for a in args if isinstance(a, torch.Tensor)}
        outs = result if isinstance(result, (list, tuple)) else [result]
        why = (f"it is called with keyword arguments ({', '.join(kwargs)})" if kwargs else
               "it returns a view of one of its arguments" if any(
                   isinstance(t, torch.Tensor) and t.untyped_storage().data_ptr() in ptrs
                   for t in outs) else None)
        return cls(fn, before, result, mutated, why)


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.is_floating_point() or a.is_complex():
        return bool(((a == b) | (a.isnan() & b.isnan())).all())
    return torch.equal(a, b)


def derive(calls: list[Call]) -> dict[str, Any]:
    """The spec of a function from its calls; raises `NotRegistrable` saying why not."""
    first = calls[0]
    why = next((c.why_not for c in calls if c.why_not), None)
    if why:
        raise NotRegistrable(why)
    kinds = [arg_type(a) for a in first.args]
    for call in calls[1:]:
        if [arg_type(a) for a in call.args] != kinds:
            raise NotRegistrable("its argument types differ between calls")
    returns, outs = _outputs(first.result)
    per_call = [_outputs(c.result)[1] for c in calls]
    if any(len(o) != len(outs) for o in per_call):
        raise NotRegistrable("it returns a different number of tensors from call to call")
    return {"args": kinds, "mutates": sorted(set().union(*(c.mutated for c in calls))),
            "returns": returns,
            "outputs": [_output(i, calls, per_call) for i in range(len(outs))]}


def _outputs(result: Any) -> tuple[str, list[torch.Tensor]]:
    if result is None:
        return "none", []
    if isinstance(result, torch.Tensor):
        return "tensor", [result]
    if isinstance(result, (list, tuple)) and all(isinstance(t, torch.Tensor) for t in result):
        return "tuple", list(result)
    raise NotRegistrable(f"it returns a {type(result).__name__}, not tensors")


def _output(i: int, calls: list[Call], per_call: list[list[torch.Tensor]]) -> dict[str, Any]:
    outs = [o[i] for o in per_call]
    dtypes = {o.dtype for o in outs}
    if len(dtypes) > 1:
        raise NotRegistrable(f"the dtype of output {i} differs from call to call")
    like = _like(i, calls, outs)
    if like is None and not all(o.is_contiguous() for o in outs):
        raise NotRegistrable(f"output {i} is neither contiguous nor laid out like an input")
    dims = [] if like is not None else [_dim(i, k, calls, outs) for k in range(outs[0].dim())]
    return {"dtype": str(outs[0].dtype).removeprefix("torch."), "like": like, "dims": dims}


def _like(i: int, calls: list[Call], outs: list[torch.Tensor]) -> int | None:
    """The argument every call's output `i` has the shape, strides and dtype of."""
    for j, arg in enumerate(calls[0].args):
        if isinstance(arg, torch.Tensor) and all(
                _layout(c.args[j]) == _layout(o) for c, o in zip(calls, outs, strict=True)):
            return j
    return None


def _layout(t: torch.Tensor) -> tuple:
    return tuple(t.shape), t.stride(), t.dtype


def _dim(i: int, k: int, calls: list[Call], outs: list[torch.Tensor]) -> list[Any]:
    """How dimension `k` of output `i` follows from the arguments, in every call."""
    values = [o.shape[k] for o in outs]
    for j, arg in enumerate(calls[0].args):
        if isinstance(arg, torch.Tensor):
            for d in range(arg.dim()):
                if all(c.args[j].shape[d] == v for c, v in zip(calls, values, strict=True)):
                    return ["dim", j, d]
        elif type(arg) is int and all(c.args[j] == v for c, v in zip(calls, values,
                                                                     strict=True)):
            return ["int", j, 0]
    if len(set(values)) == 1:
        return ["const", values[0], 0]
    raise NotRegistrable(f"dimension {k} of output {i} ({', '.join(map(str, values))}) "
                         "depends on the data, not on the arguments' shapes")
