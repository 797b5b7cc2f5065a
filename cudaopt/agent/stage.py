"""The loop judges every candidate from one fixed folder outside the workspace.

Copying a snapshot there (instead of judging it where it lies) keeps the judged bytes out
of reach of the model's later edits, and keeps the kernel build incremental: only files
whose bytes changed are rewritten, so ninja recompiles just those, and re-judging a
record or the final re-check of the best costs no full rebuild of the torch-heavy binding.
"""

from __future__ import annotations

from pathlib import Path

from cudaopt.agent.records import candidate_files

BUILD_STATE = ".cudaopt"  # the judge's build folder beside the candidate; kept


def sync(source: Path, stage: Path) -> Path:
    """Mirror `source`'s model_new.py and kernels/ into `stage`; returns the staged
    model_new.py. Files already identical keep their timestamps."""
    wanted = {path.relative_to(source): path.read_bytes() for path in candidate_files(source)}
    stage.mkdir(parents=True, exist_ok=True)
    for path in sorted(stage.rglob("*"), reverse=True):
        relative = path.relative_to(stage)
        if relative.parts[0] == BUILD_STATE:
            continue
        if path.is_file() and relative not in wanted:
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    for relative, data in wanted.items():
        target = stage / relative
        if target.is_file() and target.read_bytes() == data:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return stage / "model_new.py"
