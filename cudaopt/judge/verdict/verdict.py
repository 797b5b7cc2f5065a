"""The judge's verdict: the JSON contract outside scripts read, and the exit code."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any


class Status(str, Enum):
    """Outcome of one judgement; each maps to a distinct exit code of `cudaopt check`."""

    OK = "ok"
    BAD_INPUT = "bad_input"
    BUILD_FAILED = "build_failed"
    WRONG = "wrong"
    VIOLATION = "violation"
    CRASH = "crash"
    TIMEOUT = "timeout"


EXIT_CODES: dict[Status, int] = {
    Status.OK: 0,
    Status.BAD_INPUT: 2,
    Status.BUILD_FAILED: 3,
    Status.WRONG: 4,
    Status.VIOLATION: 5,
    Status.CRASH: 6,
    Status.TIMEOUT: 6,
}


@dataclass
class Timing:
    """Median and spread of one timed callable, in milliseconds."""

    median_ms: float
    q1_ms: float
    q3_ms: float
    min_ms: float
    samples: int
    host_median_ms: float | None = None  # host clock around call + device sync (cross-check)

    @property
    def spread_ms(self) -> float:
        return self.q3_ms - self.q1_ms


@dataclass
class Verdict:
    """Everything the judge found about one candidate.

    `speedup_vs_*` are medians of per-round ratios; `speedup_vs_*_low` their lower quartile.
    "Faster" in the reward uses the lower quartile, so noise never makes a candidate faster.
    """

    status: Status = Status.OK
    compiled: bool = False
    correct: bool = False
    violations: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    error: str = ""
    mismatch: list[str] = field(default_factory=list)  # first mismatching elements, readable
    device: str = ""
    device_name: str = ""
    torch_version: str = ""
    build_s: float | None = None
    verify_s: float | None = None
    profile_s: float | None = None
    phases_s: dict[str, float] = field(default_factory=dict)  # where the judgement's time went
    baseline_cache: dict[str, int] = field(default_factory=dict)  # torch.compile's cache use
    timing_rounds: int = 0  # rounds of the per-call protocol, re-measurements included
    trials: int = 0
    inputs_structured: list[str] = field(default_factory=list)  # derived inputs checked
    inputs_skipped: list[str] = field(default_factory=list)  # derived inputs the task refused
    eager: Timing | None = None
    compiled_baseline: Timing | None = None
    candidate: Timing | None = None
    speedup_vs_eager: float | None = None
    speedup_vs_compile: float | None = None
    speedup_vs_eager_low: float | None = None
    speedup_vs_compile_low: float | None = None
    remeasured: bool = False
    noisy: bool = False  # measurements unreliable (see `noise`): no speed reward
    # how the candidate's worker was confined (`isolation`); not isolated, a speed
    # milestone needs the user's consent (`JudgeOptions.isolation`)
    isolated: bool = False
    isolation: str = ""
    backend: str = ""  # the candidate's kernel language (`checks.backend`)
    # CUDA: the candidate's own kernels that ran in its profiled back-to-back burst (None
    # where no breakdown was asked for); [] earns no speed milestone
    kernels_ran: list[str] | None = None
    threads: int | None = None  # CPU: torch intra-op threads of the baselines and candidate
    timing_cpu: int | None = None  # CUDA: the one CPU both contestants were timed from
    # CUDA: the most device memory the judgement's processes can have held at once (each
    # one's peak, summed): what an executor sizes its lanes by; the candidate's share is
    # its own report, so it decides nothing else
    device_memory_gib: float | None = None
    stream_check: str = ""  # CUDA: how stream ordering was checked (graph capture, snapshot)
    reward: float = -1.0
    compile_mode: str = ""  # the torch.compile mode that won, of those asked for
    warm: dict[str, Any] | None = None  # back-to-back figures (`warm_figures.summarize`)
    breakdown: dict[str, Any] | None = None  # where the time goes, per contestant (`burst`)
    roofline: dict[str, Any] | None = None  # distance to the device's limit (`roofline`)
    ncu: dict[str, Any] | None = None  # Nsight Compute metrics of the candidate's kernels

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]

    @property
    def clean(self) -> bool:
        return (self.status is Status.OK and self.compiled and self.correct
                and not self.violations)

    @property
    def accepted(self) -> bool:
        """Correct, clean and faster than torch.compile beyond noise: what a run commits."""
        return self.clean and self.reward >= 3

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["status"] = self.status.value
        data.pop("compiled_baseline")
        for name, timing in (
            ("eager", self.eager),
            ("compile", self.compiled_baseline),
            ("candidate", self.candidate),
        ):
            data.pop(name, None)
            data[f"{name}_ms"] = timing.median_ms if timing else None
            data[f"{name}_spread_ms"] = timing.spread_ms if timing else None
            data[f"{name}_timing"] = asdict(timing) if timing else None
        data["exit_code"] = self.exit_code
        data["accepted"] = self.accepted
        return data

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_json(), indent=2) + "\n")

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Verdict:
        """Rebuild a verdict from `to_json` output (run reports re-rendered later)."""
        known = {f for f in cls.__dataclass_fields__}
        kwargs = {k: v for k, v in data.items() if k in known and not k.endswith("_timing")}
        kwargs["status"] = Status(data["status"])
        kwargs.pop("compiled_baseline", None)
        verdict = cls(**kwargs)
        for attr, key in (
            ("eager", "eager_timing"),
            ("compiled_baseline", "compile_timing"),
            ("candidate", "candidate_timing"),
        ):
            if data.get(key):
                setattr(verdict, attr, Timing(**data[key]))
        return verdict


def add_parts(verdict: Verdict, name: str, parts_s: dict[str, float]) -> None:
    """Sub-phases `name.part`: what a phase (or a worker's step inside it, which may overlap
    other phases) spent on each of its parts."""
    for part, spent in parts_s.items():
        key = f"{name}.{part}"
        verdict.phases_s[key] = verdict.phases_s.get(key, 0.0) + spent


def compile_story(cache: dict[str, int]) -> str:
    """One line for the trace: did torch.compile compile, or come from the on-disk caches?"""
    hits, misses = cache.get("fxgraph_cache_hit", 0), cache.get("fxgraph_cache_miss", 0)
    if misses:
        return f"compiled ({misses} graph(s) traced and compiled, {hits} from the cache)"
    if hits:
        return f"from the on-disk cache ({hits} graph(s))"
    return "was already compiled in this process (no trace)"


@contextmanager
def phase(verdict: Verdict, name: str) -> Iterator[None]:
    """Adds the block's wall time to `verdict.phases_s[name]`: where a judgement's time goes
    (bench and the reward service report it per phase)."""
    started = time.perf_counter()
    try:
        yield
    finally:
        spent = time.perf_counter() - started
        verdict.phases_s[name] = verdict.phases_s.get(name, 0.0) + spent
