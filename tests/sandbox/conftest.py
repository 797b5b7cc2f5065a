"""Fixtures for the sandbox tests: a fake user home (with a fake SSH key and a project
whose `.env` holds a fake key) outside /tmp, a run's workspace inside that project, and the
real bwrap; tests that need bwrap are skipped, with its error, where it cannot start."""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from cudaopt.sandbox import Sandbox, SandboxLimits, ShellResult, resolve_sandbox
from cudaopt.sandbox.bwrap import cached_probe
from tests.procs import processes


@pytest.fixture(scope="session")
def bwrap_ok() -> None:
    status = cached_probe()
    if not status.ok:
        pytest.skip(f"no working bubblewrap sandbox here: {status.detail}")


@dataclass
class Place:
    """Where a sandboxed command runs, and the secrets around it it must not reach."""

    home: Path
    project: Path
    workspace: Path
    records: Path
    outside: Path
    ssh_key: str
    dotenv_secret: str


@pytest.fixture
def place(monkeypatch: pytest.MonkeyPatch) -> Iterator[Place]:
    """Kept out of /tmp: the sandbox's private /tmp alone would hide anything under it, so
    only a home elsewhere shows that the home itself is hidden."""
    base = Path(tempfile.mkdtemp(prefix="cudaopt-sandbox-test-", dir=_base_dir()))
    home, outside = base / "home", base / "outside"
    project = home / "proj"
    run = project / ".cudaopt" / "runs" / "r1"
    for folder in (home / ".ssh", outside, run / "workspace", run / "candidates"):
        folder.mkdir(parents=True)
    key = f"FAKE-PRIVATE-KEY-{uuid.uuid4().hex}"
    (home / ".ssh" / "id_rsa").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{key}\n")
    dotenv = f"dotenv-secret-{uuid.uuid4().hex}"
    for folder in (project, outside):  # the home hides one; only masking hides the other
        (folder / ".env").write_text(f"MY_PROVIDER_CREDENTIAL_X={dotenv}\nCUDA_DOTENV_SET=1\n")
    (project / "model.py").write_text("# the user's task\n")
    monkeypatch.setenv("HOME", str(home))
    yield Place(home, project, run / "workspace", run / "candidates", outside, key, dotenv)
    shutil.rmtree(base, ignore_errors=True)


def _base_dir() -> str | None:
    return "/var/tmp" if os.access("/var/tmp", os.W_OK) else None


Run = Callable[..., ShellResult]


@pytest.fixture
def run(bwrap_ok: None, place: Place) -> Run:
    """`run(command, timeout_s=30, **limits)`: one command in the bwrap sandbox."""
    base = resolve_sandbox("bwrap", dotenv_dirs=[place.project, place.outside])
    base = base.with_paths(writable=[place.records])

    def go(command: str, timeout_s: float = 30.0, **limits: int) -> ShellResult:
        sandbox: Sandbox = replace(base, limits=replace(SandboxLimits(), **limits))
        return sandbox.run(command, place.workspace, dict(os.environ), timeout_s, 4000)

    return go


def alive(marker: str) -> list[int]:
    """Processes whose command line holds `marker` (left behind by a contained command)."""
    return processes(marker)
