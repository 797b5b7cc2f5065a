"""Fixtures for the agent tests: a small CPU task whose C++ candidate is reliably faster
than eager and torch.compile, cheap judge settings, and one judging stage shared by the
whole session so the torch-heavy binding object is compiled once, not once per test."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from cudaopt.agent.judging import RunConfig
from cudaopt.agent.loop import Limits
from cudaopt.judge import JudgeOptions

DATA = Path(__file__).parent / "data"
MATCHAIN = DATA / "matchain"
MODEL = "openai/fake-kernel-model"


@pytest.fixture(autouse=True)
def _offline_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-dummy-for-the-fake-server")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.delenv("CUDAOPT_RECORD_DIR", raising=False)


@pytest.fixture
def task(tmp_path: Path) -> Path:
    """The matchain task, alone in its own folder (runs are kept beside it)."""
    folder = tmp_path / "task"
    folder.mkdir()
    shutil.copy(MATCHAIN / "model.py", folder / "model.py")
    return folder / "model.py"


@pytest.fixture(scope="session")
def stage_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("judging")


@pytest.fixture
def config(stage_dir: Path):
    """RunConfig factory for a fake server: CPU, cheap timing, the shared stage."""

    def make(url: str, max_steps: int = 12, **overrides: Any) -> RunConfig:
        judge = JudgeOptions(device="cpu", trials=3, time_budget_s=2.0)
        fields = dict(
            model=MODEL,
            device="cpu",
            api_base=url,
            limits=Limits(max_steps=max_steps),
            judge=judge,
            stage_dir=stage_dir,
            bash_timeout_s=300.0,
        )
        fields.update(overrides)
        return RunConfig(**fields)

    return make


class Events:
    """An `on_event` that keeps everything, for assertions."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, kind: str, data: dict[str, Any]) -> None:
        self.seen.append((kind, data))

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [data for k, data in self.seen if k == kind]


@pytest.fixture
def events() -> Events:
    return Events()


def source(name: str) -> str:
    """A file of the matchain candidate (`kernels/matchain.cpp`, `model_new.py`, ...)."""
    return (MATCHAIN / name).read_text()


GOOD_FILES = ("kernels/matchain.cpp", "kernels/matchain_binding.cpp", "model_new.py")
