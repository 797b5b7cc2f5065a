"""`check-model`: the whole model with accepted kernels swapped in, judged like a task.

The original model becomes a task file and the swapped model a candidate folder, and both
go through `cudaopt.judge.check`: fresh inputs from secret seeds, outputs compared in a
process that never imports the candidate, the output and timing rules, and speedups vs eager
and vs torch.compile of the original model. One rule cannot apply to a whole model: its
unswapped parts run PyTorch operators, so the operator guard is off for it; each kernel is
judged again on its own task, under every rule, and that verdict stands beside it. The
candidate registers each kernel as the custom op a swap makes (see `customops`), from specs
recorded here, so `--compile MODE` judges the swapped model compiled against the original
compiled.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import torch

from cudaopt.judge import JudgeOptions, Verdict, check
from cudaopt.models import compiled, oplib, specs
from cudaopt.models.compiled import Health
from cudaopt.models.customops import Ops
from cudaopt.models.entry import Entry, load_entry
from cudaopt.models.extract import STANDALONE
from cudaopt.models.sources import Source, resolve
from cudaopt.models.staging import stage
from cudaopt.models.swap import SwapError, check_fit, load_ops
from cudaopt.models.swap import swap as swap_into
from cudaopt.runs.folder import state_dir
from cudaopt.task import BadInput

Say = Callable[[str], None]


@dataclass
class Swap:
    pattern: str
    source: Source
    paths: list[str]
    verdict: Verdict | None = None  # the kernel judged on its own task
    ops: Ops | None = None  # its kernel functions as custom ops


@dataclass
class ModelCheck:
    entry: str
    swaps: list[Swap]
    verdict: Verdict  # the whole model
    folder: Path  # the generated task and candidate
    notes: list[str] = field(default_factory=list)
    compiled: Verdict | None = None  # --compile: swapped compiled vs original compiled
    health: Health | None = None  # --compile: graphs, breaks, recompiles

    @property
    def exit_code(self) -> int:
        codes = [self.verdict.exit_code] + [s.verdict.exit_code for s in self.swaps if s.verdict]
        codes += [self.compiled.exit_code] if self.compiled else []
        return next((c for c in codes if c), 0)

    def to_json(self) -> dict[str, Any]:
        return {"entry": self.entry, "model": self.verdict.to_json(), "folder": str(self.folder),
                "notes": self.notes,
                "compiled": self.compiled.to_json() if self.compiled else None,
                "compile_health": self.health.to_json() if self.health else None,
                "kernels": [{"pattern": s.pattern, "source": s.source.label,
                             "task": str(s.source.task), "paths": s.paths,
                             "ops": s.ops.registered if s.ops else [],
                             "plain_calls": s.ops.plain if s.ops else {},
                             "verdict": s.verdict.to_json() if s.verdict else None}
                            for s in self.swaps]}


def parse_swaps(items: list[str]) -> list[tuple[str, str]]:
    out = []
    for item in items:
        pattern, sep, source = item.partition("=")
        if not sep or not pattern or not source:
            raise BadInput(f"--swap {item!r} must be PATTERN=SOURCE, e.g. "
                           "blocks.*.mlp=cudaopt/blocks.0.mlp-20260101-120000")
        out.append((pattern, source))
    return out


def plan(entry: Entry, pairs: list[tuple[str, str]],
         device: str) -> tuple[torch.nn.Module, list[Any], list[Swap]]:
    """Resolve every swap and check it fits before any judging; then build each kernel and
    record its custom ops."""
    if not pairs:
        raise BadInput("name at least one --swap PATTERN=SOURCE")
    swaps = [Swap(pattern, resolve(source), []) for pattern, source in pairs]
    model, inputs = load_entry(entry, device)
    taken: dict[str, str] = {}
    for swap in swaps:
        swap.paths = check_fit(model, swap.pattern, swap.source, inputs)
        for path in swap.paths:
            if path in taken:
                raise SwapError(f"{path} matches both {taken[path]} and {swap.pattern}")
            taken[path] = swap.pattern
        swap.source = stage(swap.source)
    for one in _distinct(swaps):
        one.ops = load_ops(one.source, torch.device(device))[1]
    for one in swaps:
        one.ops = next(s.ops for s in swaps if _key(s) == _key(one))
    return model, inputs, swaps


def check_model(entry: Entry, pairs: list[tuple[str, str]], options: JudgeOptions,
                say: Say | None = None, judge_kernels: bool = True,
                compile_mode: str | None = None) -> ModelCheck:
    """Judge the whole model with the swaps (eager against eager, the original also
    compiled); with `compile_mode`, judge it again compiled against compiled."""
    say = say or (lambda message: None)
    device = options.device or "cpu"
    say("building the model and checking the swaps fit")
    model, inputs, swaps = plan(entry, pairs, device)
    root = [specs.describe(x) for x in inputs]
    folder = write_pair(entry, root, swaps)
    if judge_kernels:
        for n, swap in enumerate(_distinct(swaps), 1):
            say(f"judging kernel {n}: {swap.source.label} on {swap.source.task.name}")
            swap.verdict = check(swap.source.task, swap.source.model_new, options,
                                 _prefixed(say, f"kernel {n}: "))
        for swap in swaps:
            swap.verdict = swap.verdict or next(s.verdict for s in swaps
                                                if _key(s) == _key(swap))
    whole = replace(options, allow=["*"],
                    build_dir=options.build_dir or shared_build_dir(swaps, device))
    verdict = check(folder / "model.py", folder / "candidate" / "model_new.py", whole,
                    lambda m: say(f"whole model: {m}"))
    note = ("the operator guard is off for the whole model (its unswapped parts run "
            "PyTorch); each kernel was judged under it on its own task")
    result = ModelCheck(entry.spec, swaps, verdict, folder, [note])
    if compile_mode:
        _judge_compiled(result, entry, model, root, replace(whole, compile_mode=compile_mode),
                        say)
    return result


def _prefixed(say: Say, prefix: str) -> Say:
    """`say` with `prefix` bound now, not when a progress message arrives."""
    return lambda message: say(prefix + message)


def _judge_compiled(result: ModelCheck, entry: Entry, model: torch.nn.Module,
                    root: list[specs.ArgSpec], options: JudgeOptions, say: Say) -> None:
    """The swapped model compiled with `options.compile_mode` against the original compiled
    the same way, and dynamo's count of its graphs, breaks and recompiles."""
    say("counting graphs, breaks and recompiles under torch.compile")
    for one in result.swaps:
        swap_into(model, one.pattern, one.source.folder, task=one.source.task)
    device = options.device or "cpu"
    result.health = compiled.health(model, compiled.drawer(specs.get_inputs_source(root),
                                                           device))
    mode = options.compile_mode
    candidate = write_pair(entry, root, result.swaps, mode)
    result.compiled = check(result.folder / "model.py", candidate, options,
                            lambda m: say(f"compiled ({mode}): {m}"))


def _key(swap: Swap) -> tuple[Path, Path]:
    return swap.source.folder, swap.source.task


def _distinct(swaps: list[Swap]) -> list[Swap]:
    """One per kernel and task: the same kernel swapped in under two patterns is judged,
    built and imported once."""
    seen: dict[tuple[Path, Path], Swap] = {}
    for swap in swaps:
        seen.setdefault(_key(swap), swap)
    return list(seen.values())


def write_pair(entry: Entry, root: list[specs.ArgSpec], swaps: list[Swap],
               compile_mode: str | None = None) -> Path:
    """The whole-model task and candidate, in the state folder beside the ENTRY, named by
    what they hold, so a second check of the same swaps rebuilds nothing. With
    `compile_mode` the candidate (`candidate-MODE/`) compiles the swapped model; returns
    its model_new.py, else the folder."""
    key = json.dumps([entry.text, [(s.pattern, str(s.source.model_new)) for s in swaps]])
    digest = hashlib.sha1(key.encode()).hexdigest()[:12]
    home = entry.file.parent if entry.file else Path.cwd()
    folder = state_dir(home) / "models" / f"check-{digest}"
    candidate = folder / ("candidate" if compile_mode is None else f"candidate-{compile_mode}")
    candidate.mkdir(parents=True, exist_ok=True)
    loader = STANDALONE.read_text().split('"""', 2)[2].lstrip("\n")
    constants = f"\nimport torch.nn as nn\n\nENTRY, ROOT = {entry.text!r}, {entry.root!r}\n"
    (folder / "model.py").write_text(
        f"# cudaopt whole-model task: the original model of {entry.spec}\n" + loader + constants
        + _WRAPPER.format(cls="Model", build="build_entry(ENTRY, ROOT)", swaps="",
                          call="self.model")
        + "\n\n" + specs.get_inputs_source(root) + "\n\ndef get_init_inputs():\n    return []\n")
    (candidate / "user_entry.py").write_text(loader + constants)
    (candidate / "user_ops.py").write_text(Path(oplib.__file__).read_text())
    _merge_kernels(candidate / "kernels", swaps)
    (candidate / "model_new.py").write_text(_candidate_source(swaps, candidate, compile_mode))
    return folder if compile_mode is None else candidate / "model_new.py"


def _merge_kernels(into: Path, swaps: list[Swap]) -> None:
    """One kernels/ folder for the one extension module a candidate gets, as links to each
    source's files (the build resolves links, so headers are found beside the originals).
    With several sources their files are prefixed by number, so object files stay apart."""
    shutil.rmtree(into, ignore_errors=True)
    into.mkdir()
    folders = _kernel_folders(swaps)
    _check_bound_names(folders)
    for n, folder in enumerate(folders):
        for path in sorted(folder.iterdir()):
            if path.is_file():
                name = f"k{n}_{path.name}" if len(folders) > 1 else path.name
                (into / name).symlink_to(path.resolve())


def _check_bound_names(folders: list[Path]) -> None:
    """One module holds every source's functions: a name bound twice would silently call
    the first source's function from the second's ModelNew."""
    owner: dict[str, Path] = {}
    for folder in folders:
        for path in sorted(folder.iterdir()):
            if path.suffix not in (".cpp", ".cc", ".cxx", ".cu"):
                continue
            for name in re.findall(r"\.def\(\s*\"(\w+)\"", path.read_text(errors="replace")):
                if owner.setdefault(name, folder) != folder:
                    raise BadInput(f"two swapped kernels bind a function named {name!r} "
                                   f"({owner[name]} and {folder}); rename one")


def _kernel_folders(swaps: list[Swap]) -> list[Path]:
    return list(dict.fromkeys(s.source.kernels for s in swaps if s.source.kernels))


def shared_build_dir(swaps: list[Swap], device: str) -> Path | None:
    """With one kernel source the candidate's kernels/ links to exactly its files, so the
    source's own build folder (from its judging, or a swap) serves unchanged."""
    from cudaopt.judge import default_build_dir

    folders = _kernel_folders(swaps)
    return default_build_dir(folders[0].parent / "model_new.py", device) if len(folders) == 1 \
        else None


def _candidate_source(swaps: list[Swap], candidate: Path, compile_mode: str | None) -> str:
    """ModelNew is the user's model with each matching submodule replaced by the source's
    ModelNew, made with its task's init inputs (the judge then loads the original weights),
    its kernels registered as the custom ops a swap registers."""
    distinct = _distinct(swaps)
    index = {_key(swap): n for n, swap in enumerate(distinct)}
    for n, swap in enumerate(distinct):
        shutil.copyfile(swap.source.model_new, candidate / f"swap_{n}.py")
        shutil.copyfile(swap.source.task, candidate / f"task_{n}.py")
        (candidate / f"ops_{n}.json").write_text(json.dumps(swap.ops.specs if swap.ops else {}))
    imports = "".join(f"import swap_{n}\nimport task_{n}\nuser_ops.install(swap_{n}, "
                      f"{swap.ops.namespace if swap.ops else ''!r}, json.loads((HERE / "
                      f"'ops_{n}.json').read_text()))\n" for n, swap in enumerate(distinct))
    call = "self.model" if compile_mode is None else "self.compiled"
    extra = "" if compile_mode is None else compiled.COMPILING.format(mode=compile_mode)
    table = "".join(f"    ({s.paths!r}, swap_{index[_key(s)]}, task_{index[_key(s)]}),\n"
                    for s in swaps)
    return ("import json\nfrom pathlib import Path\n\nimport torch\nimport torch.nn as nn\n\n"
            "import user_entry\nimport user_ops\nfrom user_entry import plain\n\n"
            f"HERE = Path(__file__).resolve().parent\n{imports}\nSWAPS = [\n{table}]\n"
            + _WRAPPER.format(cls="ModelNew", swaps=_SWAPPING + extra, call=call,
                              build="user_entry.build_entry(user_entry.ENTRY, user_entry.ROOT)"))


_SWAPPING = """\
        for paths, module, task in SWAPS:
            init = list(task.get_init_inputs())
            for path in paths:
                owner, _, name = path.rpartition(".")
                parent = self.model.get_submodule(owner)
                new = module.ModelNew(*init)
                setattr(parent, name, new.train(getattr(parent, name).training))
"""
_WRAPPER = """

class {cls}(nn.Module):
    \"\"\"The user's model (its parameters under `model.`), giving plain outputs.\"\"\"

    def __init__(self):
        super().__init__()
        self.model, _ = {build}
{swaps}
    def forward(self, *args):
        return plain({call}(*args))
"""
