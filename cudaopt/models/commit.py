"""Commit a whole-model result the way `optimize` commits a kernel: a new branch holding the
tasks, the kernels and a loader module, through a temporary index (the user's working tree,
index and current branch untouched)."""

from __future__ import annotations

import json
import tempfile
from datetime import datetime
from pathlib import Path

from cudaopt.models.wholemodel import ModelCheck
from cudaopt.reports.run import fmt_speedup
from cudaopt.runs.gitops import SKIPPED_SUFFIXES, CommitResult, commit_files, find_repo, work_tree

PACKAGE = "cudaopt_optimized"

_LOADER = '''"""Kernels cudaopt judged inside {entry}; `load_optimized(model)` swaps them in.

    from {package} import load_optimized
    model = load_optimized(model)            # or load_optimized(model, inputs) to also
                                             # check the shapes flowing into each part
"""

from pathlib import Path

import cudaopt

HERE = Path(__file__).resolve().parent
SWAPS = {swaps!r}


def load_optimized(model, inputs=None):
    """Replace each matching submodule with its kernel (built on first use); returns model."""
    for pattern, folder, task in SWAPS:
        cudaopt.swap(model, pattern, HERE / folder, task=HERE / folder / task, inputs=inputs)
    return model
'''


def commit_model(result: ModelCheck, where: Path, branch: str | None = None,
                 now: datetime | None = None) -> CommitResult:
    """`where` is a folder inside the user's repository (the ENTRY's); the package lands there."""
    repo = find_repo(where)
    folder = where.resolve().relative_to(work_tree(repo).resolve()).as_posix()
    base = f"{folder}/{PACKAGE}" if folder not in ("", ".") else PACKAGE
    files: dict[str, Path] = {}
    swaps = []
    for n, swap in enumerate(result.swaps):
        src = swap.source
        part = f"k{n}_{src.task.stem}"
        files[f"{base}/{part}/{src.task.name}"] = src.task
        files[f"{base}/{part}/model_new.py"] = src.model_new
        for path in sorted(src.kernels.iterdir()) if src.kernels else []:
            if path.is_file() and not path.name.endswith(SKIPPED_SUFFIXES):
                files[f"{base}/{part}/kernels/{path.name}"] = path
        swaps.append((swap.pattern, part, src.task.name))
    stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S")
    with tempfile.TemporaryDirectory(prefix="cudaopt-model-") as tmp:
        loader, report = Path(tmp) / "__init__.py", Path(tmp) / "result.json"
        loader.write_text(_LOADER.format(entry=result.entry, package=PACKAGE, swaps=swaps))
        report.write_text(json.dumps(result.to_json(), indent=2) + "\n")
        files[f"{base}/__init__.py"] = loader
        files[f"{base}/result.json"] = report
        return commit_files(repo, files, _message(result), branch or f"cudaopt/model-{stamp}",
                            replace=base, dotenv_dirs=[where, Path.cwd()])


def _message(result: ModelCheck) -> str:
    v = result.verdict
    subject = (f"cudaopt: {len(result.swaps)} kernel(s) in {result.entry}, end to end "
               f"{fmt_speedup(v.speedup_vs_compile)} vs torch.compile, "
               f"{fmt_speedup(v.speedup_vs_eager)} vs eager")
    body = [f"{s.pattern}: {len(s.paths)} module(s), kernel "
            f"{fmt_speedup(None if s.verdict is None else s.verdict.speedup_vs_compile)} vs "
            f"torch.compile on {s.source.task.name}" for s in result.swaps]
    body += ["", f"device: {v.device_name or v.device}, torch {v.torch_version}",
             f"Use: from {PACKAGE} import load_optimized; load_optimized(model)"]
    return subject + "\n\n" + "\n".join(body) + "\n"
