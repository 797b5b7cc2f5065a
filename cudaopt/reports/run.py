"""Run-level reports: what a kernel engineer reads after a run, in the terminal, JSON or git.

A run is judged by its final verdict (the fresh-process re-check of the best candidate);
the per-candidate verdicts explain how it got there. Everything here reads a run directory
only, so `cudaopt show` re-renders a run long after it ended.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from cudaopt.judge import Timing, Verdict
from cudaopt.reports.perf import summary_rows
from cudaopt.reports.steps import step_usage, steps_table
from cudaopt.runs.folder import RunMeta, read_meta

#: Why a run stopped, in the user's words (meta.extra["stop_reason"] keeps the code).
STOP_REASONS = {
    "done": "target reached, and no further gain",
    "max_steps": "step limit reached (--max-steps)",
    "max_cost": "spend limit reached (--max-cost)",
    "max_minutes": "time limit reached (--max-minutes)",
    "replay_exhausted": "the replayed session has no more recorded turns",
    "model_error": "the model could not be called (resumable with --resume)",
    "interrupted": "interrupted (resumable with --resume)",
    "killed": "its process was killed (resumable with --resume)",
    "crashed": "cudaopt itself failed",
}
CANDIDATE_COLUMNS = ("#", "compiled", "correct", "time", "vs eager", "vs compile", "reward")
VERSION_KEYS = ("cuda_version", "driver", "python_version", "cudaopt_version")


@dataclass
class RunRecord:
    """One run as stored on disk."""

    run_dir: Path
    meta: RunMeta
    final: Verdict | None  # fresh re-check of the best candidate; None if the run never got there
    candidates: list[tuple[int, Verdict]]
    steps: list[dict[str, Any]] = field(default_factory=list)  # tokens and cost per step

    @property
    def best(self) -> Verdict | None:
        """The verdict that counts: the final one, else the best judged candidate."""
        if self.final is not None:
            return self.final
        judged = [v for _, v in self.candidates if v.clean]
        return max(judged, key=lambda v: (v.reward, v.speedup_vs_compile or 0.0), default=None)


def load_run(run_dir: Path) -> RunRecord:
    """Read meta, final verdict and candidate verdicts of one run directory."""
    final_path = run_dir / "final_verdict.json"
    final = _read_verdict(final_path) if final_path.is_file() else None
    candidates = []
    for path in sorted((run_dir / "candidates").glob("*/verdict.json")):
        if path.parent.name.isdigit():
            candidates.append((int(path.parent.name), _read_verdict(path)))
    return RunRecord(run_dir, read_meta(run_dir), final, candidates, step_usage(run_dir))


def _read_verdict(path: Path) -> Verdict:
    return Verdict.from_json(json.loads(path.read_text()))


def run_to_json(record: RunRecord) -> dict[str, Any]:
    return {
        "run_dir": str(record.run_dir),
        "meta": asdict(record.meta),
        "final_verdict": record.final.to_json() if record.final else None,
        "candidates": [{"index": i, "verdict": v.to_json()} for i, v in record.candidates],
        "steps": record.steps,
    }


def fmt_timing(timing: Timing | None, samples: bool = False) -> str:
    """Median ± half the interquartile range: a time without its noise cannot be compared."""
    if timing is None:
        return "-"
    text = f"{timing.median_ms:#.4g} ms ± {timing.spread_ms / 2:#.2g}"
    return text + (f"  (median ± IQR/2, {timing.samples} samples)" if samples else "")


def fmt_speedup(speedup: float | None) -> str:
    return "-" if speedup is None else f"{speedup:.2f}x"


def stop_reason(code: str) -> str:
    return STOP_REASONS.get(code, code.replace("_", " "))


def fmt_wall(wall_s: float) -> str:
    minutes, seconds = divmod(int(round(wall_s)), 60)
    return f"{minutes}m {seconds:02d}s" if minutes else f"{seconds}s"


def candidate_cells(index: int, verdict: Verdict) -> list[str]:
    """One candidate as a row under CANDIDATE_COLUMNS (shared by the live view and `show`)."""
    return [
        str(index),
        "yes" if verdict.compiled else "no",
        "yes" if verdict.correct and not verdict.violations else _why_not(verdict),
        fmt_timing(verdict.candidate),
        fmt_speedup(verdict.speedup_vs_eager),
        fmt_speedup(verdict.speedup_vs_compile),
        f"{verdict.reward:g}",
    ]


def _why_not(verdict: Verdict) -> str:
    if verdict.violations:
        return "violation"
    return "no" if verdict.compiled else "-"


def candidate_table(candidates: list[tuple[int, Verdict]], title: str | None = None) -> Table:
    table = Table(*CANDIDATE_COLUMNS, title=title, title_justify="left")
    for index, verdict in candidates:
        table.add_row(*candidate_cells(index, verdict))
    return table


def summary_table(meta: RunMeta, best: Verdict | None, final: bool) -> Table:
    """Baseline and best timings, speedups, machine, versions, branch, cost, steps, time."""
    table = Table(show_header=False, box=None, padding=(0, 2, 0, 0))
    table.add_column(style="bold")
    table.add_column()
    for key, value in _summary_rows(meta, best, final):
        table.add_row(key, Text(value))  # paths and errors are text, never markup
    return table


def _summary_rows(meta: RunMeta, best: Verdict | None, final: bool) -> list[tuple[str, str]]:
    rows = [("task", meta.task), ("model", meta.model), ("result", meta.status)]
    if meta.extra.get("stop_reason"):
        rows.append(("stopped", stop_reason(meta.extra["stop_reason"])))
    if meta.extra.get("error"):  # what stopped it: the model's error, said for the user
        rows.append(("why", str(meta.extra["error"])))
    if best is not None:
        label = "best candidate" if final else "best candidate (not re-checked)"
        rows += [
            ("eager", fmt_timing(best.eager, samples=True)),
            ("torch.compile", fmt_timing(best.compiled_baseline, samples=True)),
            (label, fmt_timing(best.candidate, samples=True)),
            ("vs eager", _speedup_with_low(best.speedup_vs_eager, best.speedup_vs_eager_low)),
            ("vs compile",
             _speedup_with_low(best.speedup_vs_compile, best.speedup_vs_compile_low)),
        ]
        rows += summary_rows(best)
        rows += [("violations", "; ".join(best.violations))] if best.violations else []
        rows += [("error", best.error.strip().splitlines()[-1])] if best.error.strip() else []
    gpu = (best.device_name if best else "") or meta.gpu or meta.device
    rows += [("device", gpu), ("torch", (best.torch_version if best else "") or
                                 meta.torch_version or "-")]
    rows += [(key.replace("_", " "), str(meta.extra[key]))
             for key in VERSION_KEYS if meta.extra.get(key)]
    if meta.branch:  # set once committed; a run without a commit has no branch row
        rows += [("branch", meta.branch), ("commit", (meta.commit or "-")[:12])]
    rows += [
        ("cost", f"${meta.cost_usd:.2f}"),
        ("steps", str(meta.steps)),
        ("wall time", fmt_wall(meta.wall_s)),
    ]
    return rows + _context_rows(meta)


def _context_rows(meta: RunMeta) -> list[tuple[str, str]]:
    """Tokens billed (cached and not) and the context window the run kept to."""
    rows = []
    usage = meta.extra.get("usage") or {}
    if usage.get("calls"):
        cached = usage.get("cached_tokens", 0)
        rows.append(("tokens", f"{usage.get('prompt_tokens', 0):,} in ({cached:,} cached, "
                               f"{usage.get('uncached_tokens', 0):,} not) / "
                               f"{usage.get('completion_tokens', 0):,} out"))
    window = (meta.extra.get("context") or {}).get("window_tokens")
    if window:
        rows.append(("context", f"{window:,} tokens ({meta.extra['context'].get('source')})"))
    return rows


def _speedup_with_low(speedup: float | None, low: float | None) -> str:
    if speedup is None:
        return "-"
    return fmt_speedup(speedup) + (f" (lower quartile {low:.2f}x)" if low is not None else "")


def render_run(record: RunRecord, console: Console, candidates: bool = True) -> None:
    """The final run report; with `candidates`, the table of every judged candidate too."""
    parts: list[Any] = [summary_table(record.meta, record.best, record.final is not None)]
    if candidates and record.candidates:
        parts.append(candidate_table(record.candidates, title="candidates"))
    if record.steps:
        parts.append(steps_table(record.steps))
    if record.best is not None and record.best.warnings:
        parts.append(Text("warnings: " + "; ".join(record.best.warnings)))
    console.print(Group(*parts))


def render_markdown(meta: RunMeta, verdict: Verdict) -> str:
    """The short report committed beside the kernel, for reviewers reading the branch."""
    lines = [f"# cudaopt: {Path(meta.task).name}", ""]
    lines += ["| | |", "|---|---|"]
    lines += [f"| {key} | {value} |" for key, value in _summary_rows(meta, verdict, True)
              if key not in ("branch", "commit", "task")]
    task = Path(meta.task).name
    lines += ["", "Check it yourself:", "", "```", f"cudaopt check {task} model_new.py", "```"]
    return "\n".join(lines) + "\n"
