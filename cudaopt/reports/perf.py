"""The warm figures, where the time goes and the distance to the limit, as text lines.

Compact on purpose: the agent reads this after every `cudaopt profile`, and a reviewer reads
it in the run report. Plain strings (no markup), so the same lines serve the terminal, the
Markdown report on the branch and the model.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console

from cudaopt.judge import Verdict

TOP = 5  # breakdown entries shown per contestant


def _name(text: str, width: int = 56) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def mode_lines(verdict: Verdict) -> list[str]:
    tried = list((verdict.warm or {}).get("compile_modes_ms") or [])
    if not verdict.compile_mode:
        return []
    among = f" (the fastest per call of {', '.join(tried)})" if len(tried) > 1 else ""
    return [f"torch.compile mode: {verdict.compile_mode}{among}"]


def warm_lines(verdict: Verdict) -> list[str]:
    warm = verdict.warm
    if not warm:
        return []
    if warm.get("skipped"):
        return [f"warm back-to-back figure not measured: {warm['skipped']}"]
    mode = f" [{warm['compile_mode']}]" if warm.get("compile_mode") else ""
    times = [f"eager {warm['eager_ms']:.4f}"]
    times += [f"compile{mode} {warm['compile_ms']:.4f}"] if "compile_ms" in warm else []
    times += [f"candidate {warm['candidate_ms']:.4f} ms"]
    speed = [f"{warm[f'speedup_vs_{b}']:.2f}x vs {b} (low {warm[f'speedup_vs_{b}_low']:.2f}x)"
             for b in ("eager", "compile") if f"speedup_vs_{b}" in warm]
    lines = [f"warm, back to back ({warm['calls']} calls x {warm['rounds']} rounds, events):",
             "  " + ", ".join(times), "  " + "; ".join(speed)]
    kernel = warm.get("kernel_ms")
    if kernel:
        lines.append("summed kernel time (profiler): "
                     + ", ".join(f"{k} {v:.4f}" for k, v in kernel.items()) + " ms")
        ratio = [f"{warm[f'kernel_speedup_vs_{b}']:.2f}x vs {b}" for b in ("eager", "compile")
                 if f"kernel_speedup_vs_{b}" in warm]
        lines += ["  " + "; ".join(ratio)] if ratio else []
    return lines


def breakdown_lines(verdict: Verdict, top: int = TOP) -> list[str]:
    if not verdict.breakdown:
        return []
    lines = ["where the time goes (per call, over profiled back-to-back calls):"]
    for who, part in verdict.breakdown.items():
        label = who + (f" [{part['mode']}]" if part.get("mode") else "")
        share = part["gap_ms"] / part["call_ms"] if part["call_ms"] > 0 else 0.0
        unit = part["unit"]
        lines.append(f"  {label}: {part['call_ms']:.4f} ms, {part['launches']:.0f} {unit}s; "
                     f"{share:.0%} outside any {unit}")
        for entry in part["entries"][:top]:
            lines.append(f"    {entry['share']:>4.0%} {entry['ms']:9.4f} ms "
                         f"x{entry['launches']:<3g} {_name(entry['name'], 48)}")
        hidden = len(part["entries"]) - top
        if hidden > 0:
            lines.append(f"    ... {hidden} more in the JSON verdict")
    return lines


def _distance(found: dict[str, Any]) -> str:
    """Past 100% the bound was beaten, which takes less work than the reference's (the
    roofline counts the reference's bytes and FLOPs, not the candidate's) or data served from
    a cache the bound does not count."""
    flops = (f", {found['achieved_tflops']:.3g} TFLOP/s" if found.get("achieved_tflops")
             else "")
    beyond = ("; beyond the bound: less work than the reference's, or data from a cache"
              if found["pct_of_roofline"] > 100 else "")
    return (f"{found['pct_of_roofline']:.0f}% of roofline ({found['bound']}-bound, "
            f"{found['achieved_gbps']:.1f} GB/s{flops}{beyond})")


def roofline_lines(verdict: Verdict) -> list[str]:
    roof = verdict.roofline
    if not roof or "candidate" not in roof:
        return []
    task, peaks = roof["task"], roof["peaks"]
    flops = peaks["flops"].get(task["dtype"])
    others = [f"{name} {roof[name]['pct_of_roofline']:.0f}%" for name in ("eager", "compile")
              if name in roof]
    lines = [f"distance to the limit: candidate at {_distance(roof['candidate'])}",
             f"  task moves {(task['in_bytes'] + task['out_bytes']) / 1e6:.3g} MB in+out, "
             f"{task['flops'] / 1e9:.3g} GFLOP" + (f"; {', '.join(others)}" if others else "")]
    if "kernel" in roof:
        lines.append(f"  its one kernel: {_distance(roof['kernel'])}")
    lines.append(f"  peaks {peaks['bandwidth_bps'] / 1e9:.0f} GB/s"
                 + (f", {flops / 1e12:.3g} TFLOP/s {task['dtype']}" if flops else "")
                 + f": {peaks['source']}")
    return lines


def ncu_lines(verdict: Verdict) -> list[str]:
    found = verdict.ncu
    if not found:
        return []
    if not found.get("available"):
        return [f"Nsight Compute: {found['reason']}"]
    lines = ["Nsight Compute (one call):"]
    for kernel in found["kernels"]:
        lines.append(f"  {_name(kernel['name'], 48)}: occupancy {kernel['occupancy']}, memory "
                     f"{kernel['memory']}, compute {kernel['compute']}, top stall "
                     f"{kernel['stall']}")
    return lines


def summary_rows(verdict: Verdict) -> list[tuple[str, str]]:
    """Rows of a run's report and the branch's report file: the warm figures beside the cold
    ones, which torch.compile mode was the baseline, and the distance to the limit."""
    rows = [("torch.compile mode", verdict.compile_mode)] if verdict.compile_mode else []
    warm = verdict.warm or {}
    if warm.get("skipped"):
        rows.append(("warm (back to back)", f"not measured: {warm['skipped']}"))
    elif warm:
        vs = [f"{warm[f'speedup_vs_{b}']:.2f}x vs {b}" for b in ("eager", "compile")
              if f"speedup_vs_{b}" in warm]
        rows.append(("warm (back to back)", f"{warm['candidate_ms']:#.4g} ms, " + ", ".join(vs)))
    if warm.get("kernel_ms"):
        vs = [f"{warm[f'kernel_speedup_vs_{b}']:.2f}x vs {b}" for b in ("eager", "compile")
              if f"kernel_speedup_vs_{b}" in warm]
        rows.append(("summed kernel time", f"{warm['kernel_ms']['candidate']:#.4g} ms"
                     + (", " + ", ".join(vs) if vs else "")))
    roof = verdict.roofline or {}
    if "candidate" in roof:
        rows.append(("distance to the limit", _distance(roof["candidate"])
                     + f"; peaks: {roof['peaks']['source']}"))
    return rows


def perf_lines(verdict: Verdict, top: int = TOP) -> list[str]:
    return (mode_lines(verdict) + warm_lines(verdict) + breakdown_lines(verdict, top)
            + roofline_lines(verdict) + ncu_lines(verdict))


def render_perf(verdict: Verdict, console: Console) -> None:
    for line in perf_lines(verdict):
        console.print(line, highlight=False, markup=False)
