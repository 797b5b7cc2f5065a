"""How alike two task files are, by their syntax trees: CUDA Agent drops any synthesized
task whose AST similarity to a KernelBench task exceeds 0.9.

Each statement of the file's classes and functions becomes one token (imports, docstrings
and module-level size constants left out; `get_inputs`, `get_init_inputs`, method headers
and `super().__init__()` too, as every task has them): its syntax tree dumped after
normalisation, where every name the file defines itself (classes, functions, arguments,
variables, `self.` attributes) becomes `id`, every literal `const`, and a reference to an
imported module keeps its full dotted path (`F.relu` and `torch.nn.functional.relu` are
one token). Similarity is difflib's ratio of the two token sequences, 2 * matches / total:
a renamed copy, or the same composition with other sizes, scores 1.0; swapping one
operator of a three-statement forward scores well below 0.9.
"""

from __future__ import annotations

import ast
import difflib
from pathlib import Path

_SKIPPED_FUNCTIONS = {"get_inputs", "get_init_inputs"}


def tokens(source: str) -> list[str]:
    """The normalised statement sequence of a task's source; [] if it does not parse."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    imports = _imports(tree)
    out: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                _statements(item, imports, out)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name not in _SKIPPED_FUNCTIONS:
                _statements(node, imports, out)
    return out


def file_tokens(path: Path) -> list[str]:
    return tokens(path.read_text(errors="replace"))


def similarity(a: list[str], b: list[str]) -> float:
    if not a and not b:
        return 1.0
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def most_similar(candidate: list[str], others: dict[str, list[str]]) -> tuple[float, str | None]:
    """The highest similarity to any of `others` (name -> tokens), and whose it is."""
    best, name = 0.0, None
    for other, seq in others.items():
        matcher = difflib.SequenceMatcher(None, candidate, seq, autojunk=False)
        if matcher.real_quick_ratio() <= best or matcher.quick_ratio() <= best:
            continue
        score = matcher.ratio()
        if score > best:
            best, name = score, other
    return best, name


def _imports(tree: ast.Module) -> dict[str, str]:
    """Local name -> full module path, for `import a.b as c` and `from a import b as c`."""
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                found[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return found


def _statements(node: ast.AST, imports: dict[str, str], out: list[str]) -> None:
    if _is_docstring(node) or _is_super_init(node):
        return
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        for child in node.body:  # a method's header says nothing once names are abstracted
            _statements(child, imports, out)
        return
    bodies = [f for f in ("body", "orelse", "finalbody", "handlers") if hasattr(node, f)]
    if isinstance(node, ast.stmt) and bodies:
        head = _Normalise(imports).visit(_header(node))
        out.append(f"{type(node).__name__}:{ast.dump(head, annotate_fields=False)}")
        for field in bodies:
            for child in getattr(node, field):
                _statements(child, imports, out)
    elif isinstance(node, ast.stmt):
        out.append(ast.dump(_Normalise(imports).visit(node), annotate_fields=False))


def _header(node: ast.AST) -> ast.AST:
    """A compound statement without its bodies (those become tokens of their own)."""
    copy = type(node)()
    for name, value in ast.iter_fields(node):
        if name not in ("body", "orelse", "finalbody", "handlers", "name", "decorator_list"):
            setattr(copy, name, value)
    return copy


def _is_super_init(node: ast.AST) -> bool:
    """`super().__init__(...)`: in every task, so it would only make all tasks alike."""
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "__init__"
            and isinstance(node.value.func.value, ast.Call)
            and isinstance(node.value.func.value.func, ast.Name)
            and node.value.func.value.func.id == "super")


def _is_docstring(node: ast.AST) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str))


class _Normalise(ast.NodeTransformer):
    def __init__(self, imports: dict[str, str]) -> None:
        self.imports = imports

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:  # noqa: N802 - ast's naming
        path = self._dotted(node)
        if path is not None:
            return ast.Name(id=path)
        self.generic_visit(node)
        if isinstance(node.value, ast.Name) and node.value.id == "id":
            return ast.Name(id="id.id")  # self.anything
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:  # noqa: N802
        return ast.Name(id=self.imports.get(node.id, "id"))

    def visit_arg(self, node: ast.arg) -> ast.AST:  # noqa: N802
        return ast.arg(arg="id")

    def visit_keyword(self, node: ast.keyword) -> ast.AST:  # noqa: N802
        self.generic_visit(node)
        return node  # keyword names are the callee's API (dim=...), kept

    def visit_Constant(self, node: ast.Constant) -> ast.AST:  # noqa: N802
        return ast.Constant(value="const")

    def _dotted(self, node: ast.AST) -> str | None:
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id in self.imports:
            return ".".join([self.imports[node.id], *reversed(parts)])
        return None


_SHORT = (("torch.nn.functional.", "F."), ("torch.nn.", "nn."))


def api_calls(source: str) -> list[str]:
    """The torch operators `class Model` calls, in order, each once, as catalogue ids
    (`nn.Conv2d`, `F.relu`, `torch.sum`): what names a model-written task."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    imports, found = _imports(tree), []
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "Model":
            for call in ast.walk(node):
                path = _Normalise(imports)._dotted(call.func) if isinstance(call, ast.Call) \
                    else None
                if path and path.startswith("torch.") and path not in found:
                    found.append(path)
    return [_short(p) for p in found if not _factory(p)]


def _factory(path: str) -> bool:
    """Tensor and parameter creation (`torch.rand`, `nn.Parameter`): not an operator."""
    from cudaopt.synth.catalog import rules

    conf, name = rules(), path.rsplit(".", 1)[-1]
    return (name in conf["skip_modules"] or name == "Parameter"
            or any(name.startswith(p) for p in conf["skip_prefixes"]))


def _short(path: str) -> str:
    for long, short in _SHORT:
        if path.startswith(long):
            return short + path[len(long):]
    return path
