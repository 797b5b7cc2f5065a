"""Fixtures for the agent tests: a small CPU task whose C++ candidate is faster than eager
and torch.compile by a wide margin, cheap judge settings, and one judging stage shared by the
whole session so the torch-heavy binding object is compiled once, not once per test.

The task (examples/prefix_sum_cpu, also the CPU demo) wins by doing less work, not by a
better-tuned loop: the reference multiplies by an n x n triangular matrix of ones, O(n^2) per
row, and torch.compile still builds that matrix and calls the matrix product; the kernel keeps
a running sum, O(n).
Measured on a 2-core Intel Xeon, torch 2.13.0+cpu, four runs of
`cudaopt check model.py model_new.py --device cpu` in examples/prefix_sum_cpu: cold per call
149-243x vs eager (low 125-186x) and 53-85x vs compile (low 52-66x); warm back to back
190-259x vs eager (low 167-228x) and 70-84x vs compile (low 57-80x), where the reward
needs 1.05x under both (load average 0.7-1.5). Under a load average of 10 the margins only
widen (1678x / 928x cold low, 4453x / 329x warm low): torch's threads stall behind other
processes, a single-threaded running sum hardly does."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from cudaopt import ROOT
from cudaopt.agent.config import Limits, RunConfig
from cudaopt.judge import JudgeOptions

PREFIX_SUM = ROOT / "examples" / "prefix_sum_cpu"
MODEL = "openai/fake-kernel-model"


@pytest.fixture(autouse=True)
def _offline_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-dummy-for-the-fake-server")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.delenv("CUDAOPT_RECORD_DIR", raising=False)


@pytest.fixture
def task(tmp_path: Path) -> Path:
    """The prefix-sum task, alone in its own folder (runs are kept beside it)."""
    folder = tmp_path / "task"
    folder.mkdir()
    shutil.copy(PREFIX_SUM / "model.py", folder / "model.py")
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
    """A file of the prefix-sum candidate (`kernels/prefix_sum.cpp`, `model_new.py`, ...)."""
    return (PREFIX_SUM / name).read_text()


#: judge settings for tests about the loop rather than the speedup (resume, keeping the best,
#: fenced blocks): build and verify only, so no timing decides their outcome. A correct
#: candidate then earns reward 1, the target stays out of reach and the run ends at its step
#: limit, with the best candidate the loop judged in best/.
UNTIMED = JudgeOptions(device="cpu", trials=3, profile=False)

GOOD_FILES = ("kernels/prefix_sum.cpp", "kernels/prefix_sum_binding.cpp", "model_new.py")
