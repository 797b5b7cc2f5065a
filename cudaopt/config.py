"""One settings object, layered so the nearest intent wins.

Layers, lowest first: built-in defaults < user file (`$XDG_CONFIG_HOME/cudaopt/config.toml`,
default `~/.config/...`) < project (`cudaopt.toml`, or `[tool.cudaopt]` in `pyproject.toml`,
the nearest one found from the task's directory upward) < `CUDAOPT_*` environment < flags.
Every effective value remembers its layer, so `cudaopt config` can say why a value is what
it is. Mistakes (unknown keys, wrong types) fail loudly with the file and key: a misspelt
`max_step = 5` silently ignored would spend someone's budget.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

from cudaopt.judge import JudgeOptions

ENV_PREFIX = "CUDAOPT_"
PROJECT_FILE = "cudaopt.toml"
BACKENDS = ("cuda", "triton")
COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


class ConfigError(ValueError):
    """A configuration value cudaopt cannot use; the message names where it came from."""


@dataclass(frozen=True)
class Spec:
    """What one setting accepts: its type, allowed values and meaning (defaults: `Settings`)."""

    kind: type
    help: str
    choices: tuple[str, ...] = ()
    optional: bool = False  # may stay unset (None); files cannot write None, only omit it
    zero_ok: bool = False  # numbers must be positive; tolerances may be exactly zero


SPECS: dict[str, Spec] = {
    "model": Spec(str, "litellm model string", optional=True),
    "api_base": Spec(str, "OpenAI-compatible endpoint for the model", optional=True),
    "device": Spec(str, "auto | cuda | cuda:N | cpu"),
    "max_steps": Spec(int, "agent steps before the run stops"),
    "max_cost": Spec(float, "model spend limit in USD"),
    "max_minutes": Spec(float, "wall-clock limit of a run"),
    "context_tokens": Spec(int, "the model's context window in tokens, where neither litellm "
                           "nor the endpoint's model card says; caps a known one too",
                           optional=True),
    "atol": Spec(float, "absolute tolerance of the correctness check", zero_ok=True),
    "rtol": Spec(float, "relative tolerance of the correctness check", zero_ok=True),
    "trials": Spec(int, "correctness checks, each on fresh inputs"),
    "timeout_s": Spec(float, "judge timeout per worker step"),
    "compile_mode": Spec(str, "torch.compile mode(s) of the baseline, comma-separated: the "
                         "fastest is the baseline", COMPILE_MODES),
    "allow": Spec(list, "extra aten ops a candidate may run"),
    "branch_prefix": Spec(str, "prefix of the branches accepted kernels land on"),
    "commit": Spec(bool, "commit an accepted kernel to a new branch"),
    "sandbox": Spec(str, "auto | bwrap | none", ("auto", "bwrap", "none")),
    "backend": Spec(str, "cuda | triton: the kernel language the agent writes (cuda: CUDA "
                    "C++ on a GPU, C++ on the CPU; triton needs a GPU)", BACKENDS),
    "isolation": Spec(str, "required | optional | off: the judge's candidate worker in "
                      "namespaces of its own; optional accepts speedups where it cannot be",
                      ("required", "optional", "off")),
}


@dataclass
class Settings:
    """Effective settings; `sources[key]` says which layer set each value."""

    model: str | None = None
    api_base: str | None = None
    device: str = "auto"
    max_steps: int = 40
    max_cost: float = 10.0
    max_minutes: float = 60.0
    context_tokens: int | None = None
    atol: float = 1e-2
    rtol: float = 1e-2
    trials: int = 5
    timeout_s: float = 120.0
    compile_mode: str = "default"
    allow: list[str] = field(default_factory=list)
    branch_prefix: str = "cudaopt/"
    commit: bool = True
    sandbox: str = "auto"
    backend: str = "cuda"
    isolation: str = "required"
    sources: dict[str, str] = field(default_factory=lambda: dict.fromkeys(SPECS, "default"))

    def values(self) -> dict[str, Any]:
        return {key: getattr(self, key) for key in SPECS}

    def to_json(self) -> dict[str, Any]:
        return {key: {"value": value, "source": self.sources[key]}
                for key, value in self.values().items()}

    def judge_options(self) -> JudgeOptions:
        """The judge's view of these settings ("auto" device means: CUDA when present)."""
        return JudgeOptions(
            device=None if self.device == "auto" else self.device,
            atol=self.atol, rtol=self.rtol, trials=self.trials, allow=list(self.allow),
            timeout_s=self.timeout_s, compile_mode=self.compile_mode, isolation=self.isolation,
        )


def user_config_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".config")
    return Path(base) / "cudaopt" / "config.toml"


def find_project_config(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """The nearest `cudaopt.toml` or `pyproject.toml` holding `[tool.cudaopt]`, upward."""
    start = start.resolve()
    for folder in [start, *start.parents] if start.is_dir() else start.parents:
        own = folder / PROJECT_FILE
        if own.is_file():
            return own, _read_toml(own)
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            table = _read_toml(pyproject).get("tool", {}).get("cudaopt")
            if table is not None:
                if not isinstance(table, dict):
                    raise ConfigError(f"{pyproject}: [tool.cudaopt] must be a table")
                return pyproject, table
    return None


def load_settings(
    start: Path | None = None,
    flags: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> Settings:
    """Settings for a task in (or below) `start`, default the working directory.

    `flags` maps setting names to command-line values; None means the flag was not given.
    """
    env = os.environ if env is None else env
    settings = Settings()
    user = user_config_path(env)
    if user.is_file():
        _apply(settings, _read_toml(user), f"user {user}")
    project = find_project_config(start or Path.cwd())
    if project:
        path, table = project
        where = f"project {path}" + (" [tool.cudaopt]" if path.name == "pyproject.toml" else "")
        _apply(settings, table, where)
    for key in SPECS:
        name = ENV_PREFIX + key.upper()
        if env.get(name, "") != "":
            _set(settings, key, _from_env(key, env[name], name), f"env {name}")
    for key, value in (flags or {}).items():
        if value is not None:
            where = "flag --" + key.replace("_", "-")
            if key not in SPECS:
                raise ConfigError(f"{where}: unknown setting")
            _set(settings, key, _check(key, value, where), where)
    return settings


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read TOML: {exc}") from exc


def _apply(settings: Settings, table: Mapping[str, Any], where: str) -> None:
    for key, value in table.items():
        if key not in SPECS:
            known = ", ".join(SPECS)
            raise ConfigError(f"{where}: unknown key {key!r} (known keys: {known})")
        _set(settings, key, _check(key, value, f"{where}: key {key!r}"), where)


def _set(settings: Settings, key: str, value: Any, where: str) -> None:
    setattr(settings, key, value)
    settings.sources[key] = where


def _check(key: str, value: Any, where: str) -> Any:
    """`value` converted to the setting's type, or a ConfigError naming `where`."""
    spec = SPECS[key]
    if value is None and spec.optional:
        return None
    ok = {
        bool: isinstance(value, bool),
        int: isinstance(value, int) and not isinstance(value, bool),
        float: isinstance(value, (int, float)) and not isinstance(value, bool),
        str: isinstance(value, str),
        list: isinstance(value, list) and all(isinstance(v, str) for v in value),
    }[spec.kind]
    if not ok:
        wanted = {bool: "true or false", int: "an integer", float: "a number",
                  str: "a string", list: "a list of strings"}[spec.kind]
        raise ConfigError(f"{where}: expected {wanted}, got {value!r} ({type(value).__name__})")
    if spec.kind is float:
        value = float(value)
    if spec.kind in (int, float) and (value < 0 or (value == 0 and not spec.zero_ok)):
        raise ConfigError(f"{where}: must be {'>= 0' if spec.zero_ok else '> 0'}, got {value}")
    bad = [v for v in _choices(key, value) if spec.choices and v not in spec.choices]
    if bad:
        raise ConfigError(f"{where}: {bad[0]!r} is not one of {', '.join(spec.choices)}")
    if key == "device" and not _valid_device(value):
        raise ConfigError(f"{where}: {value!r} is not auto, cpu, cuda or cuda:N")
    return list(value) if spec.kind is list else value


def _choices(key: str, value: Any) -> list[Any]:
    """compile_mode may list several modes (`default,max-autotune-no-cudagraphs`)."""
    return value.split(",") if key == "compile_mode" else [value]


def _valid_device(value: str) -> bool:
    if value in ("auto", "cpu", "cuda"):
        return True
    return value.startswith("cuda:") and value[5:].isdigit()


def _from_env(key: str, raw: str, name: str) -> Any:
    """Environment strings parsed into the setting's type."""
    kind = SPECS[key].kind
    try:
        if kind is bool:
            lowered = raw.strip().lower()
            if lowered not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
                raise ValueError(raw)
            value: Any = lowered in ("1", "true", "yes", "on")
        elif kind is int:
            value = int(raw)
        elif kind is float:
            value = float(raw)
        elif kind is list:
            value = [part.strip() for part in raw.split(",") if part.strip()]
        else:
            value = raw
    except ValueError as exc:
        raise ConfigError(f"env {name}: cannot read {raw!r} as {kind.__name__}") from exc
    return _check(key, value, f"env {name}")
