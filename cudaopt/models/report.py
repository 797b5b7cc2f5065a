"""Tables for the terminal, 80 columns wide."""

from __future__ import annotations

from rich import box
from rich.table import Table

from cudaopt.judge import Status, Verdict
from cudaopt.models.profile import ModelProfile
from cudaopt.models.wholemodel import ModelCheck
from cudaopt.reports.run import fmt_speedup


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else "…" + text[-(width - 1):]


def _table(title: str) -> Table:
    """No vertical rules, one space between columns: the most columns 80 characters hold."""
    return Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, padding=(0, 1),
                 collapse_padding=True, pad_edge=False)


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def profile_table(prof: ModelProfile, rows: int = 20) -> Table:
    """Modules ranked by self time; the self column adds up to 100 % over all modules."""
    unit = "device" if prof.device == "cuda" else "host"
    table = _table(f"{unit} time per forward on {prof.device_name}: eager "
                   f"{_ms(prof.eager_ms)} ms, torch.compile {_ms(prof.compile_ms)} ms, "
                   f"with hooks {_ms(prof.hooked_ms)} ms")
    table.add_column("module", max_width=24, no_wrap=True)
    table.add_column("class", max_width=10, no_wrap=True)
    table.add_column("calls", justify="right", min_width=5)
    table.add_column("self %", justify="right", min_width=6)
    table.add_column("incl %", justify="right", min_width=6)
    table.add_column("self ms", justify="right", min_width=7)
    table.add_column("inputs", max_width=16, no_wrap=True)
    for stat in prof.modules[:rows]:
        table.add_row(_cut(stat.path or "(model)", 24), _cut(stat.cls, 10), f"{stat.calls:g}",
                      f"{100 * stat.self_share:.1f}", f"{100 * stat.incl_share:.1f}",
                      _ms(stat.self_ms), stat.input_label())
    rest = prof.modules[rows:]
    if rest:
        share = sum(s.self_share for s in rest)
        table.add_row(f"({len(rest)} more)", "", "", f"{100 * share:.1f}", "", "", "")
    return table


def extracted_table(found: list) -> Table:
    table = _table("tasks written")
    table.add_column("task", max_width=36, no_wrap=True)
    table.add_column("class", max_width=12, no_wrap=True)
    table.add_column("modules", justify="right")
    table.add_column("share", justify="right")
    table.add_column("kind", no_wrap=True)
    for item in found:
        share = "—" if item.share is None else f"{100 * item.share:.1f} %"
        kind = "self-contained" if item.mode == "traced" else "imports user code"
        table.add_row(_cut(str(item.file), 36), _cut(item.cls, 12), str(len(item.paths)),
                      share, kind)
    return table


def _status(verdict: Verdict | None) -> str:
    if verdict is None:
        return "not judged"
    if verdict.status is Status.OK and verdict.correct:
        return "correct"
    return verdict.status.value


def model_check_table(result: ModelCheck) -> Table:
    """Each kernel's speedup on its own task, then what they add up to on the whole model."""
    v = result.verdict
    table = _table(f"{result.entry}: per kernel (on its own task) and end to end, "
                   f"on {v.device_name or v.device}")
    table.add_column("part", max_width=30, no_wrap=True)
    table.add_column("modules", justify="right")
    table.add_column("result", no_wrap=True)
    table.add_column("vs eager", justify="right")
    table.add_column("vs compile", justify="right")
    for swap in result.swaps:
        k = swap.verdict
        table.add_row(_cut(swap.pattern, 30), str(len(swap.paths)),
                      _status(k), fmt_speedup(None if k is None else k.speedup_vs_eager),
                      fmt_speedup(None if k is None else k.speedup_vs_compile))
    table.add_section()
    table.add_row("whole model", "", _status(v), fmt_speedup(v.speedup_vs_eager),
                  fmt_speedup(v.speedup_vs_compile))
    c = result.compiled
    if c is not None:  # compiled against compiled: the figure under torch.compile
        table.add_row(f"compiled ({c.compile_mode or 'default'})", "", _status(c), "",
                      fmt_speedup(c.speedup_vs_compile))
    return table


def model_check_lines(result: ModelCheck) -> list[str]:
    v = result.verdict
    lines = []
    if v.eager and v.candidate:
        compiled = v.compiled_baseline.median_ms if v.compiled_baseline else None
        lines.append(f"whole model per call (median): eager {_ms(v.eager.median_ms)} ms, "
                     f"torch.compile {_ms(compiled)} ms, with the kernels "
                     f"{_ms(v.candidate.median_ms)} ms")
    if v.error:
        lines.append(f"whole model: {v.error.splitlines()[0]}")
    lines += [f"whole model: {m}" for m in v.mismatch[:4]]
    lines += [f"whole model: warning: {w}" for w in v.warnings]
    for swap in result.swaps:
        k = swap.verdict
        lines.append(f"{swap.pattern}: {swap.source.label}, judged on {swap.source.task.name}")
        if k is not None and (k.error or k.violations):
            lines.append(f"{swap.pattern}: {(k.error or k.violations[0]).splitlines()[0]}")
    lines += [f"{s.pattern}: kernel {name} is a plain call: {why}" for s in result.swaps
              if s.ops for name, why in s.ops.plain.items()]
    if result.health is not None:
        lines.append(result.health.line())
    if result.compiled is not None and result.compiled.error:
        lines.append(f"compiled: {result.compiled.error.splitlines()[0]}")
    return lines + [f"note: {n}" for n in result.notes]
