"""`cudaopt.swap`: put an accepted `ModelNew` in place of every matching submodule.

The candidate's kernels are built as the judge builds them, `ModelNew` is made with its
task's init inputs, and each replaced submodule's weights are carried over through its state
dict. A submodule whose parameters, buffers or inputs differ from what the task was extracted
for is refused: a kernel written for one shape is not trusted with another. Its kernel
functions become `torch.library` custom ops (see `customops`), so the swapped model runs
under torch.compile(fullgraph=True), CUDA graphs and torch.export.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import itertools
import sys
from importlib.abc import Loader
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from cudaopt.judge import MODULE_NAME, build_kernels
from cudaopt.models import customops, groups, specs
from cudaopt.models.origin import state_spec
from cudaopt.models.sources import Source, resolve
from cudaopt.models.staging import stage
from cudaopt.task import BadInput


class SwapError(BadInput):
    """A swap that would put a kernel where it was not made for; the message says why."""


def swap(model: torch.nn.Module, pattern: str, source: str | Path, *,
         inputs: list[Any] | tuple[Any, ...] | None = None, task: str | Path | None = None,
         repo: str | Path | None = None, build_dir: Path | None = None,
         build_timeout_s: float = 600.0) -> list[str]:
    """Replace the submodules of `model` matching `pattern` (`blocks.*.mlp`) with the
    `ModelNew` of `source` (a run folder, a folder holding model_new.py, or a git branch).

    Pass the model's `inputs` to also check the shapes and dtypes flowing into each
    submodule. Returns the replaced paths; raises `SwapError` and changes nothing if any
    match does not fit.
    """
    src = resolve(source, Path(task) if task else None, Path(repo) if repo else None)
    paths = check_fit(model, pattern, src, list(inputs) if inputs is not None else None)
    src = stage(src)
    device = device_for(model, paths[0], inputs)
    cls, _ = load_ops(src, device, build_dir, build_timeout_s)
    init = list(_task_module(src).get_init_inputs())
    made = {path: _instance(cls, init, model.get_submodule(path), src, device) for path in paths}
    for path, new in made.items():
        _replace(model, path, new)
    return paths


def check_fit(model: torch.nn.Module, pattern: str, src: Source,
              inputs: list[Any] | None) -> list[str]:
    """The matching paths, each checked against the task's recorded state and inputs."""
    paths = groups.match_paths(model, pattern)
    if not paths:
        raise SwapError(groups.no_match_message(model, pattern))
    want = src.origin["state"]
    for path in paths:
        diff = _diff(want, state_spec(model.get_submodule(path)))
        if diff:
            raise SwapError(f"refusing to swap {src.label} into {path}: its parameters differ "
                            f"from those of task {src.task.name} ({diff})")
    if inputs is not None:
        _check_inputs(model, paths, inputs, src)
    return paths


def _check_inputs(model: torch.nn.Module, paths: list[str], inputs: list[Any],
                  src: Source) -> None:
    from cudaopt.models.profile import capture

    want = [s.key() for s in specs.from_json(src.origin["inputs"])]
    got = capture(model, inputs, device_for(model, "", inputs).type)
    for path in paths:
        seen = got.get(path)
        if seen is None or seen.specs is None:
            raise SwapError(f"refusing to swap into {path}: it is not called in the forward "
                            "pass, so its inputs cannot be checked")
        have = [s.key() for s in seen.specs]
        if have != want:
            labels = ", ".join(s.label() for s in seen.specs)
            made = ", ".join(s.label() for s in specs.from_json(src.origin["inputs"]))
            raise SwapError(f"refusing to swap {src.label} into {path}: it receives {labels}, "
                            f"but task {src.task.name} was made for {made}")


def _diff(want: dict[str, Any], have: dict[str, Any]) -> str:
    missing = sorted(set(want) - set(have))
    extra = sorted(set(have) - set(want))
    changed = [f"{k}: {have[k][1]}{have[k][0]} here, {want[k][1]}{want[k][0]} in the task"
               for k in want if k in have and list(have[k]) != list(want[k])]
    parts = ([f"missing {', '.join(missing[:3])}"] if missing else []) + (
        [f"unexpected {', '.join(extra[:3])}"] if extra else []) + changed[:3]
    return "; ".join(parts)


def load_ops(src: Source, device: torch.device, build_dir: Path | None = None,
             build_timeout_s: float = 600.0) -> tuple[type, customops.Ops]:
    """`ModelNew` of the (staged) source with its kernel functions registered as custom ops,
    recorded on a fresh instance called with its task's inputs."""
    cls = load_model_new(src, device, build_dir, build_timeout_s)
    task = _task_module(src)
    with torch.device(device):
        probe = cls(*task.get_init_inputs()).to(device)

    def run() -> None:
        with torch.no_grad():
            probe(*[x.to(device) if isinstance(x, torch.Tensor) else x
                    for x in task.get_inputs()])

    try:
        ops = customops.make_ops(sys.modules[cls.__module__], run, namespace(src), src.label)
    except customops.BadCustomOp as exc:
        raise SwapError(f"refusing to swap {src.label}: {exc}") from exc
    return cls, ops


def namespace(src: Source) -> str:
    """The ops' namespace: named by the kernel's content and its task, so the same kernel
    loaded twice shares its ops and two kernels never share a name."""
    digest = hashlib.sha256(src.model_new.read_bytes() + src.task.read_bytes())
    for path in sorted(src.kernels.iterdir()) if src.kernels else []:
        digest.update(path.name.encode() + (path.read_bytes() if path.is_file() else b""))
    return f"cudaopt_{digest.hexdigest()[:12]}"


def load_model_new(src: Source, device: torch.device, build_dir: Path | None = None,
                   build_timeout_s: float = 600.0) -> type:
    """Build the source's kernels/ (incrementally, as the judge does) and import its
    model_new.py with that extension as `cuda_extension`; returns `ModelNew`."""
    extension = None
    if src.kernels is not None:
        from cudaopt.judge import default_build_dir

        where = build_dir or default_build_dir(src.model_new, device.type)
        result = build_kernels(src.kernels, where, build_timeout_s)
        if not result.ok:
            raise SwapError(f"building {src.kernels} failed:\n{result.log[-3000:]}")
        extension = _load_extension(where / f"{MODULE_NAME}.so")
    module = _import(src.model_new, extension)
    if not isinstance(getattr(module, "ModelNew", None), type):
        raise SwapError(f"{src.model_new} defines no class ModelNew")
    return module.ModelNew


def _load_extension(so: Path) -> ModuleType:
    module, loader = _unrun(MODULE_NAME, so,
                            importlib.machinery.ExtensionFileLoader(MODULE_NAME, str(so)))
    loader.exec_module(module)
    return module


def _unrun(name: str, path: Path, loader: Loader | None = None) -> tuple[ModuleType, Loader]:
    """A module for `path` whose code has not run yet, and the loader that runs it: callers
    differ in what they register in `sys.modules` first."""
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    if spec is None or spec.loader is None:
        raise SwapError(f"{path} cannot be imported: no loader takes its kind of file")
    return importlib.util.module_from_spec(spec), spec.loader


def _import(path: Path, extension: ModuleType | None) -> ModuleType:
    """Import under a name of its own; `import cuda_extension` inside finds this source's
    extension, so kernels of several sources live side by side in one process."""
    name = f"cudaopt_swap_{abs(hash(str(path))):x}"
    saved = sys.modules.get(MODULE_NAME)
    sys.path.insert(0, str(path.parent))
    try:
        if extension is not None:
            sys.modules[MODULE_NAME] = extension
        module, loader = _unrun(name, path)
        sys.modules[name] = module
        loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(path.parent))
        if saved is not None:
            sys.modules[MODULE_NAME] = saved
        else:
            sys.modules.pop(MODULE_NAME, None)


def _task_module(src: Source) -> ModuleType:
    module, loader = _unrun(f"cudaopt_swap_task_{src.task.stem}", src.task)
    loader.exec_module(module)
    return module


def _instance(cls: type, init: list[Any], original: torch.nn.Module, src: Source,
              device: torch.device) -> torch.nn.Module:
    with torch.device(device):
        new = cls(*init)
    new = new.to(device)
    diff = _diff(state_spec(original), state_spec(new))
    if diff:
        raise SwapError(f"refusing to swap {src.label}: its ModelNew's parameters do not match "
                        f"the module's ({diff})")
    new.load_state_dict(original.state_dict(), strict=True)
    return new.train(original.training)


def _replace(model: torch.nn.Module, path: str, new: torch.nn.Module) -> None:
    owner, _, name = path.rpartition(".")
    setattr(model.get_submodule(owner) if owner else model, name, new)


def device_for(model: torch.nn.Module, path: str,
               inputs: list[Any] | tuple[Any, ...] | None) -> torch.device:
    """Where the submodule at `path` ("" for the whole model) runs: its own tensors say so,
    and one without any (an activation) runs where the rest of its model does, or where the
    given inputs are."""
    found = (t.device for module in (model.get_submodule(path), model)
             for t in itertools.chain(module.parameters(), module.buffers()))
    given = (x.device for x in inputs or () if isinstance(x, torch.Tensor))
    return next(itertools.chain(found, given), torch.device("cpu"))
