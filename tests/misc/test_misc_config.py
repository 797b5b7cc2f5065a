"""Layered settings: defaults < user < project < environment < flags, with sources."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudaopt.config import ConfigError, load_settings, user_config_path


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_defaults_when_nothing_is_configured(tmp_path: Path, home: Path) -> None:
    settings = load_settings(tmp_path, env={"HOME": str(home)})
    assert settings.max_steps == 40 and settings.sandbox == "auto" and settings.model is None
    assert set(settings.sources.values()) == {"default"}


def test_layers_override_in_order_and_remember_their_source(tmp_path: Path, home: Path) -> None:
    user = _write(home / ".config" / "cudaopt" / "config.toml",
                  'model = "user/model"\nmax_steps = 10\ntrials = 3\nmax_cost = 2\n')
    project = _write(tmp_path / "proj" / "pyproject.toml",
                     '[project]\nname = "x"\n[tool.cudaopt]\nmax_steps = 20\ntrials = 4\n')
    task = _write(tmp_path / "proj" / "tasks" / "deep" / "model.py", "")
    env = {"HOME": str(home), "CUDAOPT_TRIALS": "6", "CUDAOPT_ALLOW": "aten::mm, aten::add",
           "CUDAOPT_COMMIT": "no"}
    settings = load_settings(task, flags={"trials": 7, "max_steps": None}, env=env)
    assert settings.model == "user/model"
    assert settings.sources["model"] == f"user {user}"
    assert settings.max_cost == 2.0 and isinstance(settings.max_cost, float)
    assert settings.max_steps == 20
    assert settings.sources["max_steps"] == f"project {project} [tool.cudaopt]"
    assert settings.allow == ["aten::mm", "aten::add"] and settings.commit is False
    assert settings.sources["allow"] == "env CUDAOPT_ALLOW"
    assert settings.trials == 7 and settings.sources["trials"] == "flag --trials"
    assert settings.to_json()["trials"] == {"value": 7, "source": "flag --trials"}


def test_nearest_project_file_wins_and_bare_pyproject_is_skipped(
        tmp_path: Path, home: Path) -> None:
    _write(tmp_path / "cudaopt.toml", "max_steps = 5\n")
    _write(tmp_path / "a" / "pyproject.toml", '[project]\nname = "x"\n')  # no [tool.cudaopt]
    near = _write(tmp_path / "a" / "b" / "cudaopt.toml", "max_steps = 6\n")
    _write(tmp_path / "a" / "b" / "pyproject.toml", "[tool.cudaopt]\nmax_steps = 99\n")
    assert load_settings(tmp_path / "a" / "b", env={"HOME": str(home)}).max_steps == 6
    deeper = load_settings(tmp_path / "a" / "b" / "c" / "model.py", env={"HOME": str(home)})
    assert deeper.sources["max_steps"] == f"project {near}"
    assert load_settings(tmp_path / "a", env={"HOME": str(home)}).max_steps == 5


def test_xdg_config_home_is_honoured(tmp_path: Path) -> None:
    assert user_config_path({"XDG_CONFIG_HOME": str(tmp_path)}) == \
        tmp_path / "cudaopt" / "config.toml"
    assert user_config_path({"HOME": "/h"}) == Path("/h/.config/cudaopt/config.toml")
    _write(tmp_path / "cudaopt" / "config.toml", 'sandbox = "none"\n')
    assert load_settings(tmp_path, env={"XDG_CONFIG_HOME": str(tmp_path)}).sandbox == "none"


@pytest.mark.parametrize(("text", "needle"), [
    ("max_step = 5\n", "unknown key 'max_step'"),
    ('max_steps = "ten"\n', "key 'max_steps': expected an integer"),
    ("max_steps = true\n", "key 'max_steps': expected an integer"),
    ("commit = 1\n", "key 'commit': expected true or false"),
    ('allow = "aten::mm"\n', "key 'allow': expected a list of strings"),
    ('sandbox = "docker"\n', "key 'sandbox': 'docker' is not one of auto, bwrap, none"),
    ('backend = "rust"\n', "key 'backend': 'rust' is not one of cuda, triton"),
    ('device = "gpu"\n', "key 'device': 'gpu' is not auto, cpu, cuda or cuda:N"),
    ("trials = 0\n", "key 'trials': must be > 0"),
    ("max_steps = [\n", "cannot read TOML"),
])
def test_bad_project_file_names_file_and_key(tmp_path: Path, home: Path, text: str,
                                             needle: str) -> None:
    path = _write(tmp_path / "cudaopt.toml", text)
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path, env={"HOME": str(home)})
    assert str(path) in str(info.value) and needle in str(info.value)


def test_bad_environment_and_flags_are_named(tmp_path: Path, home: Path) -> None:
    with pytest.raises(ConfigError, match="env CUDAOPT_MAX_STEPS"):
        load_settings(tmp_path, env={"HOME": str(home), "CUDAOPT_MAX_STEPS": "many"})
    with pytest.raises(ConfigError, match="env CUDAOPT_COMMIT"):
        load_settings(tmp_path, env={"HOME": str(home), "CUDAOPT_COMMIT": "maybe"})
    with pytest.raises(ConfigError, match="flag --atol: must be >= 0"):
        load_settings(tmp_path, flags={"atol": -1.0}, env={"HOME": str(home)})
    assert load_settings(tmp_path, flags={"atol": 0}, env={"HOME": str(home)}).atol == 0.0


def test_judge_options_follow_the_settings(tmp_path: Path, home: Path) -> None:
    settings = load_settings(tmp_path, flags={"atol": 1e-3, "allow": ["aten::mm"]},
                             env={"HOME": str(home)})
    options = settings.judge_options()
    assert options.device is None  # "auto": the judge picks CUDA when present
    assert (options.atol, options.allow) == (1e-3, ["aten::mm"])
    assert load_settings(tmp_path, flags={"device": "cuda:1"},
                         env={"HOME": str(home)}).judge_options().device == "cuda:1"
