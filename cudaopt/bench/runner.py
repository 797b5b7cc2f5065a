"""Run a bench: plan a job per task, skip what results.jsonl already holds, submit the rest
to an executor at once (builds run ahead while slots judge), and append each line as its
task finishes. Ctrl-C or SIGTERM stops the executor and writes nothing more: every line in
the file is a finished task, and the next run picks up the others."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cudaopt.bench import results
from cudaopt.bench.candidates import find_candidate
from cudaopt.bench.suite import Task
from cudaopt.executor import Executor, Job, JobResult, Sources
from cudaopt.judge import JudgeOptions

OnLine = Callable[[dict[str, Any]], None]


@dataclass
class BenchConfig:
    """Candidate mode when `candidates` is set; agent mode (job kind "agent") otherwise,
    with `agent` holding the run settings the agent handler reads."""

    options: JudgeOptions
    candidates: Path | None = None
    sample: int = 0
    agent: dict[str, Any] = field(default_factory=dict)

    @property
    def mode(self) -> str:
        return "candidates" if self.candidates is not None else "agent"


@dataclass
class Planned:
    task: Task
    key: str
    base: dict[str, Any]  # the line's fields known before the job runs
    job: Job | None  # None: nothing to run (no candidate), the line is already final


def plan(tasks: list[Task], config: BenchConfig, bench: Path) -> list[Planned]:
    return [_plan_one(task, config, bench) for task in tasks]


def _plan_one(task: Task, config: BenchConfig, bench: Path) -> Planned:
    if config.candidates is None:
        sources = Sources(task.path.name, task.path.read_text())
        settings = {k: config.agent.get(k) for k in ("model", "max_steps", "max_cost",
                                                      "max_minutes")}
        key = _digest(sources.task_key, settings)
        run_dir = bench / "runs" / task.level / task.name
        params = dict(config.agent, run_dir=str(run_dir))
        base = results.blank_line(task.id, task.level, key, mode="agent", run_dir=str(run_dir),
                                  task_path=str(task.path), candidate=None)
        return Planned(task, key, base, Job(task.id, "agent", sources, config.options, params))
    found = find_candidate(task, config.candidates, config.sample)
    if found is None:
        key = _digest(Sources(task.path.name, task.path.read_text()).task_key, None)
        base = results.blank_line(task.id, task.level, key, mode="candidates",
                                  task_path=str(task.path), candidate=None,
                                  error=f"no candidate for {task.id} in {config.candidates}")
        return Planned(task, key, base, None)
    sources = _sources(task, found)
    key = _digest(sources.task_key, sources.candidate_key)
    base = results.blank_line(task.id, task.level, key, mode="candidates",
                              task_path=str(task.path), candidate=str(found), status="pending")
    return Planned(task, key, base, Job(task.id, "judge", sources, config.options))


def _sources(task: Task, candidate: Path) -> Sources:
    """A `model_new.py` brings its `kernels/`; a KernelBench file is self-contained (its
    folder is shared by every problem's files, so a `kernels/` there belongs to none)."""
    if candidate.name == "model_new.py":
        return Sources.from_files(task.path, candidate)
    return Sources(task.path.name, task.path.read_text(), candidate.read_text())


def todo(planned: list[Planned], bench: Path, retry_failed: bool) -> list[Planned]:
    """What still needs running. A line is done when its key matches and the machine did not
    fail it; with `retry_failed`, also only if it is correct. Lines about to be re-run are
    removed now, so the file keeps one line per task."""
    lines = results.read_lines(bench)
    done = results.latest(lines)

    def finished(item: Planned) -> bool:
        line = done.get(item.task.id)
        if line is None or line.get("key") != item.key or line.get("infra_status") != "ok":
            return False
        return not (retry_failed and results.failed(line))

    left = [item for item in planned if not finished(item)]
    again = {item.task.id for item in left}
    if again & set(done):
        results.rewrite(bench, [line for line in lines if line.get("task") not in again])
    return left


def run(items: list[Planned], executor: Executor, bench: Path, on_line: OnLine) -> None:
    """Judge every item and append its line as it finishes; raises KeyboardInterrupt after
    stopping the executor when interrupted (nothing unfinished is written)."""
    for item in items:
        if item.job is None:
            _write(bench, item.base, on_line)
    submitted: dict[Future[JobResult], tuple[Planned, float]] = {}
    for item in items:
        if item.job is not None:
            submitted[executor.submit(item.job)] = (item, time.perf_counter())
    pending = set(submitted)
    try:
        while pending:
            done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            for future in done:
                item, started = submitted[future]
                result = future.result()
                queue_s = max(0.0, time.perf_counter() - started - result.wall_s)
                _write(bench, results.line_from_result(item.base, result, queue_s), on_line)
    except BaseException:
        _stop(executor)
        raise


def _stop(executor: Executor) -> None:
    executor.close(wait=False)  # kill running jobs now: finished lines are already written


def _write(bench: Path, line: dict[str, Any], on_line: OnLine) -> None:
    results.append(bench, line)
    on_line(line)


def _digest(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:20]
