"""The live view of a run: what the agent is doing now and how each candidate was judged.

On a terminal it redraws one rich panel (current step, current activity, the candidate
table). Piped into a file or CI log it prints one plain line per event instead: no colours
and no cursor movement, so logs stay greppable.
"""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from cudaopt.judge import Verdict
from cudaopt.reports.run import (
    CANDIDATE_COLUMNS,
    candidate_cells,
    candidate_table,
    fmt_speedup,
    stop_reason,
    summary_table,
)

ACTIVITY_CHARS = 160
#: Judge progress that repeats within one judgement: the live line shows it; a log gets it
#: only with --verbose.
REPEATED = ("verifying: trial", "timing: round", "timing: warm-up", "loading task",
            "task loaded", "candidate loaded", "starting workers", "building kernels/")


def _one_line(text: str, limit: int = ACTIVITY_CHARS) -> str:
    """First line of `text`, shortened: a live view shows activity, not transcripts."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


class LiveView:
    """An `on_event(kind, data)` sink for the agent loop; use it as a context manager.

    On "done" it stops redrawing and prints the final run report (summary table).
    Unknown event kinds are ignored so the loop may add kinds without breaking the view.
    """

    def __init__(self, console: Console | None = None, interactive: bool | None = None,
                 verbose: bool = False) -> None:
        self.console = console or Console()
        self.interactive = self.console.is_terminal if interactive is None else interactive
        self.verbose = verbose
        self.step = 0
        self.step_summary = ""
        self.activity = ""
        self.candidates: list[tuple[int, Verdict]] = []
        self.best_index: int | None = None
        self._live: Live | None = None
        self._handlers: dict[str, Callable[[dict[str, Any]], None]] = {
            "step": self._on_step, "tool": self._on_tool, "message": self._on_message,
            "judge": self._on_judge, "candidate": self._on_candidate, "best": self._on_best,
            "done": self._on_done, "context": self._on_context, "usage": self._on_usage,
            "compacted": self._on_compacted,
        }
        self.billed = ""  # the last step's tokens and cost

    def __enter__(self) -> LiveView:
        if self.interactive:
            self._live = Live(self._panel(), console=self.console, refresh_per_second=4)
            self._live.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Stop redrawing; the last frame stays on screen."""
        if self._live is not None:
            self._live.update(self._panel())
            self._live.stop()
            self._live = None

    def on_event(self, kind: str, data: dict[str, Any]) -> None:
        handler = self._handlers.get(kind)
        if handler is None:
            return
        handler(data)
        if self._live is not None:
            self._live.update(self._panel())

    def _print(self, line: str, always: bool = False) -> None:
        """A log line when piped; on a terminal only when `always` (above the live panel)."""
        if always or not self.interactive:
            self.console.print(line, markup=False, highlight=False, soft_wrap=True)

    def _on_step(self, data: dict[str, Any]) -> None:
        self.step = int(data.get("step", self.step + 1))
        parts = [_one_line(str(data.get("summary", "")))]
        if "cost_usd" in data:
            parts.append(f"${float(data['cost_usd']):.2f}")
        if "elapsed_s" in data:
            parts.append(f"{float(data['elapsed_s']) / 60:.1f} min")
        self.step_summary = "  ".join(p for p in parts if p)
        self.activity = ""
        self._print(f"step {self.step}  {self.step_summary}".rstrip())

    def _on_context(self, data: dict[str, Any]) -> None:
        caching = "prompt caching on" if data.get("caching") else "no prompt caching"
        self._print(f"{data['budget'].describe()}; {caching}", always=True)

    def _on_usage(self, data: dict[str, Any]) -> None:
        self.billed = f"step {data['step']}: {data['usage'].describe()}"
        self._print(f"  tokens {self.billed[len('step '):]} (run: ${data['total'].cost_usd:.4f})")

    def _on_compacted(self, data: dict[str, Any]) -> None:
        first, last = data["steps"]
        self._print(f"  compacted steps {first}-{last} of what is sent to fit the context "
                    f"({data['tokens_before']:,} -> {data['tokens_after']:,} tokens)",
                    always=True)

    def _on_tool(self, data: dict[str, Any]) -> None:
        name = str(data.get("name", "tool"))
        summary = _one_line(str(data.get("summary", "")))
        summary = summary[len(name) + 1:] if summary.startswith(name + " ") else summary
        failed = "  [failed]" if data.get("ok") is False else ""
        self.activity = f"{name}: {summary}{failed}"
        self._print(f"  {self.activity}")

    def _on_message(self, data: dict[str, Any]) -> None:
        text = _one_line(str(data.get("text", "")))
        if text:
            self.activity = f"{data.get('role', 'model')}: {text}"
            self._print(f"  {self.activity}")

    def _on_judge(self, data: dict[str, Any]) -> None:
        text = _one_line(str(data.get("text", "")))
        self.activity = f"judge: {text}"
        if self.verbose or not text.startswith(REPEATED):
            self._print(f"  {self.activity}", always=self.verbose)

    def _on_candidate(self, data: dict[str, Any]) -> None:
        index, verdict = int(data["index"]), data["verdict"]
        self.candidates.append((index, verdict))
        cells = zip(CANDIDATE_COLUMNS[1:], candidate_cells(index, verdict)[1:], strict=True)
        pairs = [f"{name.replace(' ', '_')}={cell}" for name, cell in cells]
        if verdict.status.value != "ok":
            pairs.append(f"status={verdict.status.value}")
        by = "cudaopt's judge" if data.get("trusted") else "the agent's own check"
        self._print(f"candidate {index} ({by}): " + "  ".join(pairs))

    def _on_best(self, data: dict[str, Any]) -> None:
        self.best_index = int(data["index"])
        verdict: Verdict = data["verdict"]
        self._print(f"best so far: candidate {self.best_index}, "
                    f"{fmt_speedup(verdict.speedup_vs_compile)} vs torch.compile as judged "
                    "by cudaopt (each judgement times afresh, so figures differ by a few %)")

    def _on_done(self, data: dict[str, Any]) -> None:
        self.close()
        final: Verdict | None = data.get("verdict")
        best = final or next((v for i, v in self.candidates if i == self.best_index), None)
        self.console.line()
        if data.get("reason"):
            self.console.print(f"run ended: {stop_reason(data['reason'])}", markup=False,
                               highlight=False)
        if final is not None and final.speedup_vs_compile is not None:
            self.console.print(
                f"final check in fresh processes with new secret seeds: "
                f"{fmt_speedup(final.speedup_vs_compile)} vs torch.compile. Only this figure "
                "counts; the ones above came from earlier judgements of the same kernel.",
                markup=False, highlight=False)
        self.console.print(summary_table(data["meta"], best, final is not None))

    def _panel(self) -> Group:
        header = Text(f"step {self.step}", style="bold")
        if self.step_summary:
            header.append(f"  {self.step_summary}", style="")
        parts: list[Any] = [header, Text(f"  {self.activity or '…'}", style="dim")]
        if self.billed:
            parts.insert(1, Text(f"  {self.billed}", style="dim"))
        if self.candidates:
            table = candidate_table(self.candidates)
            if self.best_index is not None:
                for row, (index, _) in enumerate(self.candidates):
                    if index == self.best_index:
                        table.rows[row].style = "bold green"
            parts.append(table)
        return Group(*parts)
