"""One call from options to a ready `Run`: device and window checked, the catalogue of the
installed torch loaded, the `--against` suites read, the model reached (when one is given)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from cudaopt.synth.calibrate import load_factors
from cudaopt.synth.catalog import load_catalog, rules
from cudaopt.synth.runner import Run, suite_tokens
from cudaopt.synth.sources import RandomSource, Source
from cudaopt.task import BadInput


@dataclass
class SynthOptions:
    n: int
    out: Path
    seed: int = 0
    max_ops: int = 5
    against: list[Path] = field(default_factory=list)
    device: str | None = None
    eager_ms: tuple[float, float] | None = None  # None: the device's default window
    model: str | None = None
    api_base: str | None = None
    timeout_s: float = 300.0


def default_window(device: str) -> tuple[float, float]:
    low, high = rules()["eager_ms"][device.split(":")[0]]
    return float(low), float(high)


def parse_window(text: str) -> tuple[float, float]:
    try:
        low, high = (float(part) for part in text.split(","))
    except ValueError:
        raise BadInput(f"--eager-ms {text!r}: give LO,HI in milliseconds, e.g. 1,100") from None
    if not 0 < low < high:
        raise BadInput(f"--eager-ms {text!r}: need 0 < LO < HI")
    return low, high


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cudaopt" / "synth"


def build_run(options: SynthOptions) -> Run:
    from cudaopt.bench.suite import SuiteError
    from cudaopt.judge import resolve_device

    if options.n < 1 or not 1 <= options.max_ops <= 5:
        raise BadInput("--n must be at least 1 and --max-ops between 1 and 5")
    if options.out.exists() and not options.out.is_dir():
        raise BadInput(f"--out {options.out} is a file, not a folder")
    device = resolve_device(options.device)
    window = options.eager_ms or default_window(device)
    try:
        against = suite_tokens(options.against)
    except SuiteError as exc:
        raise BadInput(f"--against: {exc}") from exc
    catalog = load_catalog(cache_dir())
    source: Source
    if options.model:
        source = _model_source(options.model, options, catalog, device, window)
    else:
        factors = load_factors(catalog, device, cache_dir())
        source = RandomSource(catalog, rules(), options.seed, options.max_ops,
                              device.split(":")[0], window, factors)
    return Run(source, options.out, options.n, options.seed, device, window, against,
               options.timeout_s)


def _model_source(name: str, options: SynthOptions, catalog: list, device: str,
                  window: tuple[float, float]) -> Source:
    """`name`: `options.model`, which is optional there and known to be given here."""
    from cudaopt.agent.errors import PreflightError
    from cudaopt.agent.policy.llm import LitellmModel
    from cudaopt.synth.llm import ModelSource

    model = LitellmModel(name, options.api_base, tools=False)
    try:
        model.preflight()
    except PreflightError as exc:
        raise BadInput(str(exc)) from exc
    return ModelSource(model, catalog, options.seed, options.max_ops, device, window)
