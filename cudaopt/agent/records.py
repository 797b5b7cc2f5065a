"""Candidate records: each judged candidate snapshotted as `NNN/` (model_new.py, kernels/,
verdict.json). `cudaopt verify` / `cudaopt profile` write one when CUDAOPT_RECORD_DIR is
set; the loop reads them as hints only, since the model's shell could forge one."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from cudaopt.judge import Verdict


def record(record_dir: Path, candidate: Path, verdict: Verdict) -> Path:
    """Snapshot `candidate` (a model_new.py), the kernels/ beside it and `verdict` into the
    next free `record_dir/NNN/`; safe against concurrent writers."""
    record_dir.mkdir(parents=True, exist_ok=True)
    target = _claim_next(record_dir)
    snapshot(candidate, target)
    verdict.write(target / "verdict.json")
    return target


def snapshot(candidate: Path, target: Path) -> None:
    """Copy `candidate` (as model_new.py) and the kernel sources beside it into `target`."""
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy2(candidate, target / "model_new.py")
    folder = candidate.parent
    for file in candidate_files(folder):
        relative = file.relative_to(folder)
        if relative.parts[0] == "kernels":
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(file, target / relative)


def _claim_next(record_dir: Path) -> Path:
    number = max(list_records(record_dir, with_verdict=False), default=0) + 1
    while True:
        target = record_dir / f"{number:03d}"
        try:
            target.mkdir()
            return target
        except FileExistsError:
            number += 1


def list_records(record_dir: Path, with_verdict: bool = True) -> list[int]:
    """Record numbers present, ascending; by default only complete ones (verdict written)."""
    if not record_dir.is_dir():
        return []
    numbers = []
    for entry in record_dir.iterdir():
        if entry.name.isdigit() and entry.is_dir():
            if not with_verdict or (entry / "verdict.json").is_file():
                numbers.append(int(entry.name))
    return sorted(numbers)


def record_path(record_dir: Path, number: int) -> Path:
    return record_dir / f"{number:03d}"


def read_verdict(path: Path) -> Verdict | None:
    """The verdict in `path/verdict.json`, or None when missing or unreadable."""
    try:
        return Verdict.from_json(json.loads((path / "verdict.json").read_text()))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def candidate_files(folder: Path) -> list[Path]:
    """The sources that make a candidate: model_new.py and kernels/, build products left out.

    Regular files only: cudaopt copies these outside the sandbox (stage, best/, the commit),
    so a symlink planted by the model (`kernels/k.cu -> ~/.ssh/id_rsa`) must not be followed.
    """
    files = [folder / "model_new.py"] if _regular(folder / "model_new.py") else []
    kernels = folder / "kernels"
    if kernels.is_dir() and not kernels.is_symlink():
        files += sorted(
            p for p in kernels.rglob("*")
            if _regular(p) and not _ignored(p.relative_to(folder))
        )
    return files


def _regular(path: Path) -> bool:
    """A file that is no symlink (rglob does not descend into symlinked folders)."""
    return path.is_file() and not path.is_symlink()


def content_hash(folder: Path) -> str:
    """Identity of a candidate's sources, so each is judged only once."""
    digest = hashlib.sha256()
    for file in candidate_files(folder):
        digest.update(file.relative_to(folder).as_posix().encode() + b"\0")
        digest.update(file.read_bytes() + b"\0")
    return digest.hexdigest()


def _ignored(relative: Path) -> bool:
    names = set(relative.parts)
    return (
        bool(names & {"build", "__pycache__", ".cudaopt"})
        or relative.suffix in {".so", ".o", ".pyc"}
        or relative.name.startswith(".ninja")
    )
