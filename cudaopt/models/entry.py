"""ENTRY: where a user's model comes from. Checked before anything expensive runs."""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cudaopt.models import standalone
from cudaopt.task import BadInput, parse_file, top_level_names


@dataclass
class Entry:
    spec: str  # as the user wrote it
    root: str  # absolute folder it is resolved from
    text: str  # `path.py:callable` with an absolute path, or `package.module:callable`

    @property
    def file(self) -> Path | None:
        where = self.text.rpartition(":")[0]
        return Path(where) if where.endswith(".py") else None


def parse_entry(spec: str, root: Path | None = None) -> Entry:
    """Validate ENTRY's form, file and callable name without running any of the user's code
    (for a file); a module is found, not imported, unless it is inside a package."""
    root = (root or Path.cwd()).resolve()
    where, sep, name = spec.rpartition(":")
    if not sep or not where or not name.isidentifier():
        raise BadInput(f"ENTRY {spec!r} must be path/to/file.py:callable or "
                       "package.module:callable (a callable returning (model, inputs))")
    if where.endswith(".py"):
        path = (root / where).resolve()
        tree = parse_file(path, "ENTRY")
        if name not in top_level_names(tree):
            raise BadInput(f"ENTRY {spec!r}: {path} defines no top-level {name!r}; it must define "
                           f"def {name}(device=...) returning (model, inputs)")
        return Entry(spec, str(root), f"{path}:{name}")
    if str(root) not in sys.path:  # packages are found from the folder ENTRY is given in
        sys.path.insert(0, str(root))
    try:
        found = importlib.util.find_spec(where)
    except (ImportError, ValueError) as exc:
        raise BadInput(f"ENTRY {spec!r}: cannot find module {where!r}: {exc}") from exc
    if found is None:
        raise BadInput(f"ENTRY {spec!r}: no module named {where!r} (is it installed, or is "
                       "the current folder its parent?)")
    return Entry(spec, str(root), spec)


def load_entry(entry: Entry, device: str) -> tuple[Any, list[Any]]:
    """Run ENTRY on `device`; its result must be `(nn.Module, tuple-or-list of inputs)`."""
    import torch

    try:
        fn = standalone.import_entry(entry.text, entry.root)
    except AttributeError as exc:
        raise BadInput(f"ENTRY {entry.spec!r}: {exc}") from exc
    if not callable(fn):
        raise BadInput(f"ENTRY {entry.spec!r} names a {type(fn).__name__}, not a callable")
    with torch.device(device):
        result = standalone.build_entry(entry.text, entry.root, device)
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        raise BadInput(f"ENTRY {entry.spec!r} returned {type(result).__name__}; it must "
                       "return (model, inputs): an nn.Module and a tuple or list of arguments")
    model, inputs = result
    if not isinstance(model, torch.nn.Module):
        raise BadInput(f"ENTRY {entry.spec!r} returned a {type(model).__name__} as the model; "
                       "it must be a torch.nn.Module")
    if isinstance(inputs, torch.Tensor):
        inputs = [inputs]
    if not isinstance(inputs, (tuple, list)):
        raise BadInput(f"ENTRY {entry.spec!r} returned inputs of type {type(inputs).__name__}; "
                       "they must be a tuple or list of positional arguments")
    return model, list(inputs)
