"""Fixtures for tests/misc: an isolated HOME so no user or system git/cudaopt config leaks in."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.misc.misc_helpers import IDENTITY_VARS


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty HOME and config dir, so no user or system setting leaks into a test."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in IDENTITY_VARS:
        monkeypatch.delenv(name, raising=False)
    for name in [n for n in os.environ if n.startswith("CUDAOPT_")]:
        monkeypatch.delenv(name)
    return home


@pytest.fixture
def identity(home: Path) -> Path:
    """A configured git identity in the fake HOME."""
    (home / ".gitconfig").write_text("[user]\n\tname = Ada\n\temail = ada@example.com\n")
    return home


