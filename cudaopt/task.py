"""Load and validate task and candidate files without running them.

Validation reads the syntax tree only, so a bad file gets a clear message before any child
process starts, and nothing the file does at import time runs in the caller.
"""

from __future__ import annotations

import ast
from pathlib import Path


class BadInput(Exception):
    """A file the user gave cannot be judged; the message says why and what to do."""


def top_level_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def parse_file(path: Path, role: str) -> ast.Module:
    """Parse `path`, turning a missing file or a syntax error into `BadInput`."""
    if not path.is_file():
        raise BadInput(f"{role} file not found: {path}")
    try:
        source = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"cannot read {role} file {path}: {exc}") from exc
    try:
        return ast.parse(source, filename=str(path))
    except SyntaxError as exc:
        raise BadInput(
            f"{role} file {path} has a syntax error at line {exc.lineno}: {exc.msg}"
        ) from exc


def validate_task(path: Path) -> None:
    """A task is KernelBench's format: `Model`, `get_inputs()`, `get_init_inputs()`."""
    names = top_level_names(parse_file(path, "task"))
    missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if n not in names]
    if missing:
        raise BadInput(
            f"task file {path} lacks {', '.join(missing)}: a task defines class Model(nn.Module), "
            "get_inputs() and get_init_inputs() (KernelBench format)"
        )


def validate_candidate(path: Path) -> None:
    """A candidate defines `ModelNew`, built with the same init inputs as `Model`."""
    names = top_level_names(parse_file(path, "candidate"))
    if "ModelNew" not in names:
        raise BadInput(
            f"candidate file {path} lacks class ModelNew: it must define class ModelNew(nn.Module) "
            "taking the same constructor arguments as Model"
        )
