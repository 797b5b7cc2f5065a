"""Which submodules become tasks: path globs, extraction units, and identical-module groups."""

from __future__ import annotations

import fnmatch
import hashlib
from dataclasses import dataclass, field

import torch

from cudaopt.models.specs import ArgSpec
from cudaopt.task import BadInput

_PLAIN = (int, float, bool, str, tuple)


def match_paths(model: torch.nn.Module, pattern: str) -> list[str]:
    """Module paths matching `pattern` segment by segment: `*` stays within one segment
    (`blocks.*.mlp` is blocks.0.mlp, not blocks.0.inner.mlp); `**` spans any number."""
    want = pattern.split(".")
    return [path for path, _ in model.named_modules()
            if path and _segments(want, path.split("."))]


def _segments(want: list[str], have: list[str]) -> bool:
    if not want:
        return not have
    if want[0] == "**":
        return any(_segments(want[1:], have[i:]) for i in range(len(have) + 1))
    return bool(have) and fnmatch.fnmatchcase(have[0], want[0]) and _segments(want[1:], have[1:])


def no_match_message(model: torch.nn.Module, pattern: str) -> str:
    names = [p for p, _ in model.named_modules() if p]
    near = [p for p in names if pattern.split(".")[-1].strip("*") in p][:6] or names[:6]
    return (f"no submodule matches {pattern!r}; module paths look like: {', '.join(near)} "
            "(`*` matches one path segment, `**` any number)")


def is_unit(module: torch.nn.Module, root: torch.nn.Module) -> bool:
    """An extraction unit: no descendant is user code (only torch's layers below it), so
    it is one fusion-sized piece like an MLP, an attention or a norm, not a whole block."""
    if module is root and list(module.children()):
        return False
    return all(type(m).__module__.startswith("torch.") for m in module.modules()
               if m is not module)


def units(model: torch.nn.Module) -> list[str]:
    """The largest extraction units: a unit inside another unit is part of that one."""
    found: list[str] = []
    for path, module in model.named_modules():
        if is_unit(module, model) and not any(u == "" or path.startswith(u + ".") for u in found):
            found.append(path)
    return found


@dataclass
class Group:
    """Identical submodules: same class, same configuration and state shapes, same inputs."""

    key: str
    paths: list[str] = field(default_factory=list)
    incl_ms: float = 0.0  # per forward, all members together
    inputs: list[ArgSpec] = field(default_factory=list)


def config_key(module: torch.nn.Module, inputs: list[ArgSpec]) -> str:
    cls = type(module)
    parts = [f"{cls.__module__}.{cls.__qualname__}", repr(module), repr(module.training)]
    for name, sub in module.named_modules():
        attrs = sorted((k, repr(v)) for k, v in vars(sub).items()
                       if not k.startswith("_") and k != "training" and isinstance(v, _PLAIN))
        parts.append(f"{name}:{type(sub).__qualname__}:{attrs}")
    buffers = {name for name, _ in module.named_buffers()}
    for name, value in module.state_dict().items():
        parts.append(f"{name}:{tuple(value.shape)}:{value.dtype}")
        if name in buffers and value.numel() <= 1 << 16:  # masks, tables: values matter
            parts.append(hashlib.sha1(value.detach().cpu().contiguous().view(-1)
                                      .view(torch.uint8).numpy().tobytes()).hexdigest())
    parts += [repr(s.key()) for s in inputs]
    return hashlib.sha1("\n".join(parts).encode()).hexdigest()[:16]


def group(model: torch.nn.Module, paths: list[str], inputs: dict[str, list[ArgSpec]],
          incl_ms: dict[str, float]) -> list[Group]:
    """Paths grouped by `config_key`, in the order of their first member."""
    groups: dict[str, Group] = {}
    for path in paths:
        module = model.get_submodule(path)
        key = config_key(module, inputs[path])
        found = groups.setdefault(key, Group(key, inputs=inputs[path]))
        found.paths.append(path)
        found.incl_ms += incl_ms.get(path, 0.0)
    return list(groups.values())


def require_called(paths: list[str], inputs: dict[str, list[ArgSpec]],
                   notes: dict[str, str]) -> list[str]:
    """Paths that ran in the forward with recordable inputs; others are named in an error if
    nothing is left."""
    ok = [p for p in paths if p in inputs]
    if paths and not ok:
        why = "; ".join(f"{p}: {notes.get(p, 'not called in the forward pass')}" for p in paths[:5])
        raise BadInput(f"none of the chosen submodules can be extracted ({why})")
    return ok
