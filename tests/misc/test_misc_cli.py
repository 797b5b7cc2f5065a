"""`cudaopt runs`, `show`, `config` and `doctor` on run directories made with
cudaopt.runs.folder."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from cudaopt.cli import misc
from cudaopt.cli.doctor import Check
from cudaopt.runs.folder import new_run_dir, write_meta
from tests.misc.misc_helpers import make_meta, make_verdict

WIDE = {"COLUMNS": "250"}


@pytest.fixture
def app() -> typer.Typer:
    """Only this module's commands: the rest of the CLI lands separately."""
    app = typer.Typer()
    misc.register(app)
    return app


def _run(app: typer.Typer, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env=WIDE)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def _make_runs(folder: Path) -> tuple[Path, Path]:
    """An older failed run and a newer accepted one with candidates and a final verdict."""
    task = folder / "gelu.py"
    task.write_text("class Model: pass\n")
    old = new_run_dir(task, datetime(2025, 1, 1, 9, 0, 0))
    write_meta(old, make_meta(task, old.name, status="[odd] status", started="2025-01-01T09:00:00"))
    new = new_run_dir(task, datetime(2025, 1, 2, 9, 0, 0))
    write_meta(new, make_meta(task, new.name, status="accepted", started="2025-01-02T09:00:00",
                              best_speedup_vs_compile=1.5, branch="cudaopt/model-x",
                              commit="abc123def4567890", cost_usd=1.25, steps=12, wall_s=754.0,
                              extra={"cuda_version": "12.8"}))
    bad = make_verdict(1.5)
    bad.warnings = ["[red] is not markup"]
    for index, speedup in ((1, 0.9), (2, 1.5)):
        (new / "candidates" / f"{index:03d}").mkdir(parents=True)
        make_verdict(speedup).write(new / "candidates" / f"{index:03d}" / "verdict.json")
    bad.write(new / "final_verdict.json")
    return old, new


def test_runs_lists_newest_first(tmp_path: Path, home: Path, app: typer.Typer) -> None:
    old, new = _make_runs(tmp_path)
    code, out = _run(app, "runs", str(tmp_path), "--json")
    rows = json.loads(out)
    assert code == 0 and [r["run_id"] for r in rows] == [new.name, old.name]
    assert rows[0]["branch"] == "cudaopt/model-x" and rows[0]["run_dir"] == str(new)
    code, out = _run(app, "runs", str(tmp_path / "gelu.py"))
    assert code == 0
    assert new.name in out and old.name in out and "cudaopt/model-x" in out
    assert "1.50x" in out and "2025-01-02 09:00" in out and "accepted" in out
    assert "[odd] status" in out  # statuses are text, never parsed as markup
    assert out.index(new.name) < out.index(old.name)
    assert "\x1b[" not in out  # piped: no colour codes


def test_runs_without_runs_says_where_they_live(tmp_path: Path, home: Path,
                                                app: typer.Typer) -> None:
    code, out = _run(app, "runs", str(tmp_path))
    assert code == 0 and ".cudaopt/runs" in out
    assert json.loads(_run(app, "runs", str(tmp_path), "--json")[1]) == []


def test_show_renders_the_report(tmp_path: Path, home: Path, app: typer.Typer) -> None:
    _, new = _make_runs(tmp_path)
    code, out = _run(app, "show", new.name, "--dir", str(tmp_path))
    assert code == 0
    for needle in ("3.000 ms ± 0.10  (median ± IQR/2, 20 samples)", "2.000 ms ± 0.050",
                   "1.50x (lower quartile 1.45x)", "NVIDIA H200", "2.9.0+cu128",
                   "cuda version", "12.8", "cudaopt/model-x", "abc123def456",
                   "$1.25", "12m 34s", "candidates", "0.90x", "[red] is not markup"):
        assert needle in out, needle
    assert _run(app, "show", "latest", "--dir", str(tmp_path))[1] == out
    assert _run(app, "show", str(new))[1] == out


def test_show_json_round_trips_the_verdicts(tmp_path: Path, home: Path,
                                            app: typer.Typer) -> None:
    _, new = _make_runs(tmp_path)
    code, out = _run(app, "show", new.name[:-2], "--dir", str(tmp_path), "--json")
    data = json.loads(out)
    assert code == 0 and data["meta"]["run_id"] == new.name
    assert data["final_verdict"]["speedup_vs_compile"] == 1.5
    assert data["final_verdict"]["eager_spread_ms"] == pytest.approx(0.2)
    assert [c["index"] for c in data["candidates"]] == [1, 2]


def test_show_unknown_or_ambiguous_run_fails_clearly(tmp_path: Path, home: Path,
                                                     app: typer.Typer) -> None:
    _make_runs(tmp_path)
    code, out = _run(app, "show", "nope", "--dir", str(tmp_path))
    assert code == 2 and "no run 'nope'" in out and "cudaopt runs" in out
    code, out = _run(app, "show", "gelu-2025", "--dir", str(tmp_path))
    assert code == 2 and "matches several runs" in out


def test_config_shows_values_and_sources(tmp_path: Path, home: Path, app: typer.Typer,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "cudaopt.toml").write_text('max_steps = 7\nmodel = "openai/gpt-5"\n')
    monkeypatch.setenv("CUDAOPT_SANDBOX", "none")
    code, out = _run(app, "config", str(tmp_path), "--json")
    data = json.loads(out)
    assert code == 0
    assert data["max_steps"] == {"value": 7, "source": f"project {tmp_path / 'cudaopt.toml'}"}
    assert data["sandbox"] == {"value": "none", "source": "env CUDAOPT_SANDBOX"}
    assert data["trials"]["source"] == "default"
    code, out = _run(app, "config", str(tmp_path))
    assert code == 0 and "openai/gpt-5" in out and "env CUDAOPT_SANDBOX" in out


def test_config_error_names_file_and_key(tmp_path: Path, home: Path, app: typer.Typer) -> None:
    (tmp_path / "cudaopt.toml").write_text("max_stepz = 7\n")
    code, out = _run(app, "config", str(tmp_path))
    assert code == 2 and "cudaopt.toml" in out and "max_stepz" in out


def test_doctor_exit_code_and_json(tmp_path: Path, home: Path, app: typer.Typer,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, object] = {}

    def fake(model: str | None, api_base: str | None, build: bool) -> list[Check]:
        seen.update(model=model, api_base=api_base, build=build)
        return [Check("gpu", "pass", "NVIDIA H200"), Check("sandbox", "warn", "no bwrap")]

    monkeypatch.setattr(misc, "run_doctor", fake)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cudaopt.toml").write_text('model = "openai/gpt-5"\n')
    code, out = _run(app, "doctor", "--quick", "--json")
    assert code == 0 and [c["name"] for c in json.loads(out)] == ["config", "gpu", "sandbox"]
    assert seen == {"model": "openai/gpt-5", "api_base": None, "build": False}
    code, out = _run(app, "doctor", "--model", "m", "--api-base", "http://h:8000/v1")
    assert seen["model"] == "m" and seen["api_base"] == "http://h:8000/v1"
    assert "PASS    gpu" in out and "WARN    sandbox" in out
    (tmp_path / "cudaopt.toml").write_text("modle = 1\n")
    code, out = _run(app, "doctor")
    assert code == 1 and "FAIL    config" in out and "modle" in out
