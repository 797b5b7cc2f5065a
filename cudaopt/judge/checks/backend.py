"""Which kernel language a candidate is written in, read from its files before anything runs.

The judge takes CUDA C++ (`load_inline` or a `kernels/` folder), plain C++ (the CPU path)
and Triton alike; the verdict and a bench's results name the backend, and a Triton
candidate judged where Triton cannot run (no GPU) is refused before anything is built,
with a message that says what to do instead of a Triton traceback from the worker.
"""

from __future__ import annotations

import ast
from pathlib import Path

from cudaopt.task import BadInput

CUDA_SUFFIXES = (".cu", ".cuh")


def candidate_backend(candidate: Path) -> str:
    """"triton", "cuda", "cpp", or "torch" (no kernel source of its own: a candidate made
    of PyTorch operators, such as an identity candidate)."""
    tree = ast.parse(candidate.read_text(errors="replace"), str(candidate))
    if _uses_triton(candidate, tree, set()):
        return "triton"
    kernels = candidate.resolve().parent / "kernels"
    files = [p for p in kernels.iterdir() if p.is_file()] if kernels.is_dir() else []
    inline = _inline_sources(tree)
    if "cuda_sources" in inline or any(p.suffix in CUDA_SUFFIXES for p in files):
        return "cuda"
    if inline or any(p.suffix in (".cpp", ".cc", ".cxx") for p in files):
        return "cpp"
    return "torch"


def refuse_unrunnable(backend: str, device: str) -> None:
    """Triton compiles for a GPU only: on the CPU, say so before anything is built."""
    if backend == "triton" and device != "cuda":
        raise BadInput(
            f"the candidate's kernels are Triton, which runs on a CUDA GPU only, and this "
            f"judgement runs on {device}: judge it on a GPU (--device cuda), or write the "
            "kernel in C++ for the CPU (a load_inline call or a kernels/ folder)")


def _uses_triton(path: Path, tree: ast.AST, seen: set[Path]) -> bool:
    """Whether the file, or a module beside it that it imports, imports triton."""
    seen.add(path)
    names = _imported(tree)
    if "triton" in names:
        return True
    for name in sorted(names):
        sibling = path.parent / f"{name}.py"
        if sibling.is_file() and sibling not in seen:
            try:
                found = ast.parse(sibling.read_text(errors="replace"), str(sibling))
            except SyntaxError:
                continue  # the candidate's import of it fails, and says why
            if _uses_triton(sibling, found, seen):
                return True
    return False


def _imported(tree: ast.AST) -> set[str]:
    """The top-level names of the modules a file imports."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def _inline_sources(tree: ast.AST) -> set[str]:
    """The source keywords of the `load_inline` calls in the file."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _called(node) == "load_inline":
            found |= {kw.arg for kw in node.keywords if kw.arg in ("cpp_sources",
                                                                     "cuda_sources")}
            if len(node.args) >= 3:  # load_inline(name, cpp_sources, cuda_sources)
                found.add("cuda_sources")
            found.add("load_inline")
    return found


def _called(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
