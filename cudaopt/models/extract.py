"""`extract`: KernelBench task files for chosen submodules of a user's model.

A task is self-contained when torch.fx can trace the submodule and the generated `Model`
reproduces it exactly (checked here, on the recorded inputs, with the real weights loaded);
otherwise the file imports the user's code to build the submodule, and says so.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from cudaopt.models import codegen, groups, specs
from cudaopt.models.entry import Entry, load_entry
from cudaopt.models.hooks import Captured
from cudaopt.models.origin import header_line, state_spec
from cudaopt.models.profile import capture, profile_model
from cudaopt.task import BadInput

STANDALONE = Path(__file__).with_name("standalone.py")
Say = Callable[[str], None]


@dataclass
class Extracted:
    file: Path
    paths: list[str]
    cls: str
    mode: str  # "traced" (self-contained) | "imported" (builds the user's model)
    note: str  # why it imports the user's code, if it does
    share: float | None  # of the profiled forward, all members together (--top only)


def extract(entry: Entry, out: Path, device: str, patterns: list[str] | None = None,
            top: int | None = None, say: Say | None = None) -> list[Extracted]:
    say = say or (lambda message: None)
    if not patterns and not top:
        raise BadInput("name the submodules to extract (paths, globs allowed) or pass --top N")
    say("building the model")
    model, inputs = load_entry(entry, device)
    incl: dict[str, float] = {}
    total_ms = None
    if patterns:
        paths = _matching(model, patterns)
    else:
        say("profiling to rank the submodules")
        prof = profile_model(model, inputs, device, iters=5, compile=False, say=say)
        incl = {s.path: s.incl_ms for s in prof.modules}
        total_ms = incl.get("")
        paths = [p for p in groups.units(model) if p in incl]
    say("recording the submodules' inputs")
    captured = capture(model, inputs, device, keep_args=set(paths).__contains__)
    found = {p: c.specs for p, c in captured.items() if c.specs is not None}
    notes = {p: c.error for p, c in captured.items() if c.error}
    chosen = groups.group(model, groups.require_called(paths, found, notes), found, incl)
    if top:
        chosen = sorted(chosen, key=lambda g: g.incl_ms, reverse=True)[:top]
    out.mkdir(parents=True, exist_ok=True)
    results = []
    for n, grp in enumerate(chosen, 1):
        say(f"writing task {n}/{len(chosen)}: {grp.paths[0]}")
        share = grp.incl_ms / total_ms if total_ms else None
        results.append(_write(entry, model, grp, captured[grp.paths[0]], out, device, share))
    return results


def _matching(model: torch.nn.Module, patterns: list[str]) -> list[str]:
    paths: list[str] = []
    for pattern in patterns:
        hits = groups.match_paths(model, pattern) if pattern else [""]
        if not hits:
            raise BadInput(groups.no_match_message(model, pattern))
        paths += [p for p in hits if p not in paths]
    return paths


def _write(entry: Entry, model: torch.nn.Module, grp: groups.Group, got: Captured, out: Path,
           device: str, share: float | None) -> Extracted:
    module = model.get_submodule(grp.paths[0])
    mode, note = "traced", ""
    init: list[int] = []
    for parametrize in (True, False):  # sizes as constructor arguments, else as literals
        try:
            body, init = codegen.traced_source(module, parametrize)
            _self_check(body, init, module, got, device)
            break
        except codegen.NotStandalone as exc:
            note = str(exc)
    else:
        mode, init = "imported", []
        body = imported_source(entry, grp.paths[0])
    origin = {"entry": entry.spec, "entry_path": entry.text, "root": entry.root,
              "paths": grp.paths, "class": type(module).__qualname__, "mode": mode,
              "device": device, "inputs": specs.to_json(grp.inputs),
              "state": state_spec(module)}
    text = (_header(entry, grp, module, mode, note) + header_line(origin) + "\n" + body + "\n\n"
            + specs.get_inputs_source(grp.inputs)
            + f"\n\ndef get_init_inputs():\n    return {init!r}\n")
    path = out / f"{grp.paths[0] or 'model'}.py"
    path.write_text(text)
    return Extracted(path, grp.paths, type(module).__qualname__, mode, note, share)


def _header(entry: Entry, grp: groups.Group, module: torch.nn.Module, mode: str,
            note: str) -> str:
    cls = type(module)
    lines = [f"cudaopt task: {grp.paths[0] or 'the whole model'} ({cls.__qualname__}) "
             f"of {entry.spec}"]
    if len(grp.paths) > 1:
        lines.append(f"{len(grp.paths)} identical modules share this task: "
                     + ", ".join(grp.paths))
    lines.append("inputs: " + ", ".join(s.label() for s in grp.inputs))
    if mode == "traced":
        lines.append("self-contained: generated from a torch.fx trace and checked against the "
                     "real module; the judge loads its own weights into Model and ModelNew")
    else:
        lines.append(f"NOT self-contained: Model builds the user's model from {entry.spec} and "
                     f"returns its submodule (tracing failed: {note})")
    return "".join(f"# {line}\n" for line in lines)


def imported_source(entry: Entry, path: str) -> str:
    """A `Model` that is the user's own submodule: `Model()` builds the user's model on the
    judge's device and returns the submodule itself, so its parameter names are the real ones."""
    loader = STANDALONE.read_text().split('"""', 2)[2].lstrip("\n")
    return (loader + "\nimport torch.nn as nn\n\n"
            f"ENTRY, ROOT, PATH = {entry.text!r}, {entry.root!r}, {path!r}\n\n\n"
            "class Model(nn.Module):\n"
            "    def __new__(cls, *args):\n"
            "        model, _ = build_entry(ENTRY, ROOT)\n"
            "        return model.get_submodule(PATH)\n")


def _self_check(body: str, init: list[Any], module: torch.nn.Module, got: Captured,
                device: str) -> None:
    """The generated Model, given the real weights and the recorded inputs, must give the
    real module's recorded output; a trace that specialised away behaviour fails here."""
    namespace = types.ModuleType("cudaopt_traced_check")
    try:
        exec(compile(body, "<traced task>", "exec"), namespace.__dict__)  # noqa: S102
        with torch.device(device):
            model = namespace.Model(*init)
        model.load_state_dict(module.state_dict(), strict=True)
        with torch.no_grad():
            output = model(*got.args)
    except Exception as exc:  # noqa: BLE001 - any failure means: import the user's code
        raise codegen.NotStandalone(f"the generated model fails: {type(exc).__name__}: "
                                    f"{str(exc).splitlines()[0] if str(exc) else ''}") from exc
    if not _same(output, got.output):
        raise codegen.NotStandalone("the generated model's output differs from the module's")


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return (a.shape == b.shape and a.dtype == b.dtype
                and torch.allclose(a.float(), b.float(), rtol=1e-4, atol=1e-5, equal_nan=True))
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b
