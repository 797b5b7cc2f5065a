"""`synthesize`: propose, filter and keep tasks until the folder holds `n` of them.

Static filters first (a composition that does not type-check, or one too like a task of the
`--against` suites or one already kept), then the running ones in a child process (see
`evaluate`). Each try is one manifest line, written as soon as it is decided, even when a
step raised (see `steps`); a kept task is a file `NNNN_<operators>.py` beside the
manifest.
"""

from __future__ import annotations

import shutil
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from cudaopt.synth.evaluate import Outcome, Prober
from cudaopt.synth.manifest import Manifest
from cudaopt.synth.similarity import file_tokens, most_similar, tokens
from cudaopt.synth.sources import Candidate, Source
from cudaopt.synth.steps import ERROR_CHARS, Rejected, step

MAX_SIMILARITY = 0.9


@dataclass
class Progress:
    kept: int  # in the folder, this run's included
    wanted: int
    tried: int  # by this run
    last: str  # "<name>: <status>"


@dataclass
class Summary:
    out: Path
    wanted: int
    kept_before: int
    kept_now: int
    tried: int
    statuses: Counter[str]  # this run's tries by status
    ops_counts: Counter[int]  # this run's kept tasks by number of operators
    seconds: float
    gave_up: bool = False  # stopped at the try limit short of `wanted`

    @property
    def kept_per_minute(self) -> float:
        return self.kept_now / self.seconds * 60 if self.seconds else 0.0


@dataclass
class Run:
    source: Source
    out: Path
    n: int
    seed: int
    device: str
    window_ms: tuple[float, float]
    against: dict[str, list[str]] = field(default_factory=dict)  # suite task id -> tokens
    timeout_s: float = 300.0
    max_tries: int | None = None

    def synthesize(self, report: Callable[[Progress], None] | None = None) -> Summary:
        say = report or (lambda progress: None)
        self.out.mkdir(parents=True, exist_ok=True)
        manifest = Manifest.open(self.out)
        kept = {line["name"]: file_tokens(self.out / line["file"]) for line in manifest.kept
                if (self.out / line["file"]).is_file()}
        before, since, started = len(kept), len(manifest.lines), time.perf_counter()
        attempt, limit = manifest.tries, self.max_tries or 50 * self.n + 50
        ops_counts: Counter[int] = Counter()
        with Prober(self.device, self.window_ms, self.timeout_s, self.out / ".staging") as prober:
            while len(kept) < self.n and len(manifest.lines) - since < limit:
                candidate = self.source.propose(attempt, list(kept))
                line = self._judge(candidate, attempt, kept, prober)
                manifest.append(line)
                if line["status"] == "kept":
                    ops_counts[len(candidate.ops)] += 1
                attempt += 1
                say(Progress(len(kept), self.n, len(manifest.lines) - since,
                             f"{line['name']}: {line['status']}"))
        shutil.rmtree(self.out / ".staging", ignore_errors=True)
        return Summary(self.out, self.n, before, len(kept) - before, len(manifest.lines) - since,
                       manifest.statuses(since), ops_counts, time.perf_counter() - started,
                       gave_up=len(kept) < self.n)

    def _judge(self, candidate: Candidate, attempt: int, kept: dict[str, list[str]],
               prober: Prober) -> dict[str, object]:
        """The try's manifest line; a step that raises rejects this composition there."""
        name = f"{len(kept) + 1:04d}_{candidate.name}"
        line: dict[str, object] = {"name": name, "ops": candidate.ops,
                                   "shapes": candidate.shapes, "seed": self.seed,
                                   "attempt": attempt, "origin": candidate.origin,
                                   "eager_ms": None, "compile_ms": None,
                                   "max_similarity": None}
        if candidate.source is None:
            return {**line, "status": candidate.rejected, "error": candidate.note}
        try:
            return self._filter(candidate, candidate.source, name, line, kept, prober)
        except Rejected as exc:
            return {**line, "status": exc.step, "error": exc.error}

    def _filter(self, candidate: Candidate, source: str, name: str, line: dict[str, object],
                kept: dict[str, list[str]], prober: Prober) -> dict[str, object]:
        with step("similarity"):
            seq = tokens(source)
            score, like = most_similar(seq, {**self.against, **kept})
        line.update(max_similarity=round(score, 4), similar_to=like)
        if score > MAX_SIMILARITY:
            return {**line, "status": "similarity"}
        with step("runs_eager"):  # the prober itself failed, before any filter's verdict
            outcome = self._run(prober, source, name)
        with step("sizing"):
            resized = self._resized(candidate, outcome)
        if resized is not None:  # sized by an estimate that missed: once more, by the time
            line["resized_from"] = {"shapes": candidate.shapes, "eager_ms": outcome.eager_ms}
            source = resized.source or ""
            with step("runs_eager"):
                outcome = self._run(prober, source, name)
            candidate = resized
        line.update(status=outcome.status, eager_ms=outcome.eager_ms,
                    compile_ms=outcome.compile_ms, shapes=outcome.shapes or candidate.shapes)
        if outcome.error:
            line["error"] = outcome.error[-ERROR_CHARS:]
        if outcome.status == "kept":
            (self.out / f"{name}.py").write_text(source)
            line["file"] = f"{name}.py"
            kept[name] = seq
        return line

    def _resized(self, candidate: Candidate, outcome: Outcome) -> Candidate | None:
        """The composition at the batch its measured eager time asks for, when that time
        fell outside the window and the batch can still move (see `resize_batch`)."""
        if outcome.status != "eager_window" or not outcome.eager_ms or not candidate.resize:
            return None
        return candidate.resize(outcome.eager_ms)

    def _run(self, prober: Prober, source: str, name: str) -> Outcome:
        task = self.out / ".staging" / f"{name}.py"
        task.parent.mkdir(exist_ok=True)
        task.write_text(source)
        try:
            return prober.evaluate(task)
        finally:
            for suffix in (".py", ".json", ".log"):
                task.with_suffix(suffix).unlink(missing_ok=True)


def suite_tokens(suites: list[Path]) -> dict[str, list[str]]:
    """Every task of the `--against` suites (found as `cudaopt bench` finds them)."""
    from cudaopt.bench.suite import discover

    return {f"{task.id}": file_tokens(task.path) for task in discover(suites)}
