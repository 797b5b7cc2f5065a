"""Rendering a verdict for people: rich in a terminal, plain text when piped."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from cudaopt.judge import Status, Timing, Verdict
from cudaopt.reports.perf import render_perf

_HEADLINES = {
    Status.OK: "correct and clean",
    Status.BAD_INPUT: "bad input",
    Status.BUILD_FAILED: "build failed",
    Status.WRONG: "wrong result",
    Status.VIOLATION: "rule violation",
    Status.CRASH: "candidate crashed",
    Status.TIMEOUT: "candidate timed out",
}


def _ms(t: Timing | None) -> str:
    return "-" if t is None else f"{t.median_ms:.4f} ms ± {t.spread_ms / 2:.4f}"


def _x(value: float | None, low: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x (low {low:.2f}x)"


def render_verdict(verdict: Verdict, console: Console) -> None:
    """The report of `cudaopt check`: status, build, timings with spread, speedups, reward."""
    style = "green" if verdict.status is Status.OK else "red"
    device = verdict.device_name or verdict.device  # none when the device was the problem
    console.print(f"[bold {style}]{_HEADLINES[verdict.status]}[/]  reward {verdict.reward:g}"
                  + (f"  device {device}" if device else "")
                  + (f"  torch {verdict.torch_version}" if verdict.torch_version else "")
                  + ("  [bold yellow]noisy[/]" if verdict.noisy else ""))
    if verdict.build_s is not None:
        console.print(f"build {verdict.build_s:.1f} s", highlight=False)
    if verdict.trials:
        console.print(f"verified on {verdict.trials} trial(s) with fresh inputs"
                      + (f" in {verdict.verify_s:.1f} s" if verdict.verify_s else ""))
    if verdict.inputs_structured:
        console.print("then on inputs of other structure: "
                      + ", ".join(verdict.inputs_structured), highlight=False, markup=False)
    for skipped in verdict.inputs_skipped:
        console.print(f"skipped (the task's own Model cannot take it): {skipped}",
                      highlight=False, markup=False)
    if verdict.stream_check:
        console.print(f"stream ordering checked by {verdict.stream_check}", highlight=False,
                      markup=False)
    if verdict.timing_cpu is not None:
        console.print(f"timed from CPU {verdict.timing_cpu} (the baselines and the candidate "
                      "alike)", highlight=False)
    if verdict.threads:
        console.print(f"CPU threads: {verdict.threads} (torch.set_num_threads, the same for the "
                      "baselines and the candidate)", highlight=False)
    if verdict.candidate is not None:
        table = Table(show_header=True, header_style="bold")
        for col in ("", "median (± half IQR)", "min", "speedup"):
            table.add_column(col)
        rows = [
            ("eager", verdict.eager,
             _x(verdict.speedup_vs_eager, verdict.speedup_vs_eager_low)),
            ("torch.compile", verdict.compiled_baseline,
             _x(verdict.speedup_vs_compile, verdict.speedup_vs_compile_low)),
            ("candidate", verdict.candidate, ""),
        ]
        for name, timing, speed in rows:
            if timing is not None:
                table.add_row(name, _ms(timing), f"{timing.min_ms:.4f} ms", speed)
        console.print(table)
        console.print("cold, per call (L2 flushed, one call at a time): speedup = baseline / "
                      "candidate, median over interleaved rounds; 'low' is the lower quartile")
        console.print("the reward needs both the cold and the warm 'low' beyond the margin")
        render_perf(verdict, console)
    for v in verdict.violations:
        console.print(f"[red]violation:[/] {v}", highlight=False)
    for w in verdict.warnings:
        console.print(f"[yellow]warning:[/] {w}", highlight=False)
    for line in verdict.mismatch[:12]:
        console.print(line, highlight=False, markup=False)
    if verdict.error:
        console.print(verdict.error.rstrip(), highlight=False, markup=False)
