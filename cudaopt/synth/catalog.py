"""The operator catalogue: what the installed torch offers, learned by calling it.

Every public function of `torch` and `torch.nn.functional` and every layer of `torch.nn`
is tried on small CPU tensors of ranks 1-5; what it accepts and gives back decides its
family (elementwise, binary, reduction, scan, matmul for functions; the `torch.nn` source
module for layers) and the ranks it takes. Only operators that return one float tensor,
keep the batch dimension, are deterministic, finite on normal draws and follow their input
are kept, so a composition of them type-checks before it runs. Probing runs in a child
process (an operator may crash) and is cached per torch version and rules file.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

RULES_PATH = Path(__file__).with_name("data") / "rules.json"
CATALOG_VERSION = 1
PROBE_TIMEOUT_S = 900.0


def rules() -> dict[str, Any]:
    return json.loads(RULES_PATH.read_text())


def load_catalog(cache_dir: Path) -> list[dict[str, Any]]:
    """The catalogue for this torch, probed once and then read from `cache_dir`."""
    import torch

    digest = hashlib.sha256(RULES_PATH.read_bytes()).hexdigest()[:12]
    path = cache_dir / f"ops-torch{torch.__version__}-v{CATALOG_VERSION}-{digest}.json"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        run_child(["cudaopt.synth.catalog", str(tmp)], PROBE_TIMEOUT_S)
        tmp.replace(path)
    return json.loads(path.read_text())


def run_child(argv: list[str], timeout_s: float, cwd: str | None = None) -> None:
    """`python -m ARGV...`; a failure raises with the child's last words."""
    done = subprocess.run([sys.executable, "-m", *argv], capture_output=True, text=True,
                          timeout=timeout_s, cwd=cwd)
    if done.returncode:
        raise RuntimeError(f"python -m {' '.join(argv)} failed (exit {done.returncode}):\n"
                           f"{done.stderr[-3000:]}")


def resolve(op_id: str) -> Callable[..., Any]:
    """The torch callable (function or layer class) behind a catalogue id."""
    import torch

    space, name = op_id.split(".", 1)
    return getattr({"torch": torch, "F": torch.nn.functional, "nn": torch.nn}[space], name)


def probe_all() -> list[dict[str, Any]]:
    import torch

    found: list[dict[str, Any]] = []
    conf = rules()
    for space, module in (("torch", torch), ("F", torch.nn.functional)):
        for name in sorted(dir(module)):
            fn = getattr(module, name, None)
            if _eligible_function(name, fn, conf):
                found += [op for op in [_probe_function(f"{space}.{name}", fn)] if op]
    for name in sorted(dir(torch.nn)):
        cls = getattr(torch.nn, name)
        if (isinstance(cls, type) and issubclass(cls, torch.nn.Module)
                and name not in conf["skip_modules"] and not name.startswith("Lazy")):
            family = conf["families"]["modules"].get(cls.__module__.rsplit(".", 1)[-1])
            op = _probe_module(name, cls, family, conf) if family else None
            if op:
                found.append(op)
    return found


def _eligible_function(name: str, fn: Any, conf: dict[str, Any]) -> bool:
    return (callable(fn) and not isinstance(fn, type) and not name.startswith("_")
            and not name.endswith("_") and not any(name.startswith(p)
                                                   for p in conf["skip_prefixes"]))


def _shape(rank: int, batch: int = 2) -> list[int]:
    return [batch, 4, 6, 7, 5][:rank]


def _good(make: Callable[[list[torch.Tensor], int], Any], rank: int, same: bool) -> bool:
    """One float tensor, batch kept (the whole shape when `same`), deterministic, finite,
    and following its input."""
    import torch

    gen = torch.Generator().manual_seed(rank)
    try:
        x = torch.randn(_shape(rank), generator=gen)
        y, again = make([x], 0), make([x.clone()], 0)
        other = make([torch.randn(_shape(rank), generator=gen)], 0)
        batch3 = make([torch.randn(_shape(rank, 3), generator=gen)], 1)
    except Exception:  # noqa: BLE001 - any refusal means "not this form"
        return False
    tensors = (y, again, other, batch3)
    if not all(type(t) is torch.Tensor and t.dtype == torch.float32 for t in tensors):
        return False
    if same and y.shape != x.shape:
        return False
    return (y.dim() >= 1 and batch3.dim() >= 1 and batch3.shape[0] == 3
            and bool(torch.isfinite(y).all()) and torch.equal(y, again)
            and not torch.equal(y, other) and not (y.shape == x.shape and torch.equal(y, x)))


def _local(fn: Callable[[Any], Any], rank: int = 3) -> bool:
    """An elementwise operator: nudging one input element changes no other output."""
    import torch

    x = torch.randn(_shape(rank), generator=torch.Generator().manual_seed(7))
    nudged = x.clone()
    nudged.view(-1)[5] += 1.0
    try:
        y, z = fn(x), fn(nudged)
        changed = (z != y).reshape(-1).nonzero().reshape(-1).tolist()
    except Exception:  # noqa: BLE001 - an operator that refuses the shape is not elementwise
        return False
    return y.shape == x.shape and changed in ([], [5])


def _ranks(make: Callable[[list[torch.Tensor], int], Any], low: int = 1,
           same: bool = False) -> list[int]:
    return [r for r in rules()["probe_ranks"] if r >= low and _good(make, r, same)]


def _probe_function(op_id: str, fn: Any) -> dict[str, Any] | None:
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base = {"id": op_id, "kind": "function"}
        ranks = _ranks(lambda xs, b: fn(xs[0], dim=1), low=2)
        if ranks:
            x = torch.randn(_shape(3))
            out = fn(x, dim=1)
            family = "reduction" if out.dim() == 2 else "scan" if out.shape == x.shape else None
            return {**base, "family": family, "form": "dim", "ranks": ranks} if family else None
        ranks = _ranks(lambda xs, b: fn(xs[0]), same=True)
        if ranks:
            return ({**base, "family": "elementwise", "form": "unary", "ranks": ranks}
                    if _local(fn) else None)
        ranks = _ranks(lambda xs, b: fn(xs[0], torch.ones_like(xs[0]) * 0.5 + xs[0] * 0.1),
                       same=True)
        if ranks and _local(lambda x: fn(x, torch.full_like(x, 0.7))):
            if _local(lambda y: fn(torch.full_like(y, 0.3), y)):
                return {**base, "family": "binary", "form": "same", "ranks": ranks}
        ranks = _ranks(lambda xs, b: fn(xs[0], torch.ones(xs[0].shape[-1], 3)), low=2)
        if ranks:
            return {**base, "family": "matmul", "form": "matrix", "ranks": ranks}
    return None


def _init_rules(cls: type[Any], conf: dict[str, Any]) -> tuple[dict[str, Any], int] | None:
    """Constructor arguments by name: sizes bound to an input dimension, sampled sizes, or
    fixed ones; a layer with any other required argument is left out."""
    init: dict[str, Any] = {}
    bind = None
    for p in list(inspect.signature(cls.__init__).parameters.values())[1:]:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name in conf["bind"]:
            init[p.name], bind = "bind", conf["bind"][p.name]
        elif p.name in conf["sizes"] and (p.default is p.empty or p.default is None):
            init[p.name] = conf["sizes"][p.name]
        elif p.default is p.empty:
            return None
    return init, (1 if bind is None else bind)


def build_init(init: dict[str, Any], bind: int, shape: list[int],
               args: dict[str, int]) -> dict[str, Any]:
    """Concrete constructor arguments for an input of `shape` and a step's choices."""
    from math import gcd

    values: dict[str, Any] = {}
    for name, rule in init.items():
        if rule == "bind":
            values[name] = shape[bind]
        elif rule == "out":
            values[name] = args.get("out", 8)
        elif rule == "groups":
            values[name] = gcd(shape[bind], args.get("groups", 2))
        else:
            values[name] = rule
    return values


def _probe_module(name: str, cls: type, family: str, conf: dict[str, Any]) -> dict[str, Any] | None:
    import torch

    found = _init_rules(cls, conf)
    if found is None:
        return None
    init, bind = found

    def make(xs: list[Any], b: int) -> Any:
        torch.manual_seed(0)
        layer = cls(**build_init(init, bind, list(xs[0].shape), {"out": 8, "groups": 2}))
        with torch.no_grad():
            return layer(xs[0])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ranks = _ranks(make, low=2)
    return ({"id": f"nn.{name}", "kind": "module", "family": family, "form": "module",
             "ranks": ranks, "init": init, "bind": bind} if ranks else None)


if __name__ == "__main__":
    Path(sys.argv[1]).write_text(json.dumps(probe_all(), indent=1))
