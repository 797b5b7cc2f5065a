"""An accepted kernel used the three ways docs/models.md shows, each timed on CUDA.

    python benchmarks/model_ways.py [--kernelbench KB_DIR]

Two models, each with a CUDA kernel swapped in by `cudaopt.swap` (so it is a custom op):
the test suite's small bf16 transformer with tests/models/rmsnorm_cuda in its eight norms,
and, with `--kernelbench`, KernelBench's level-3 MiniGPTBlock (44) with the NewGELU kernel
of benchmarks/triton_pairs/cuda/88_MinGPTNewGelu in its MLP's activation. For each way of
running it (eager; torch.compile(fullgraph=True) in the default and "reduce-overhead" (CUDA
graphs) modes; torch.export's program) the original and the swapped model are timed alike:
device events around 10 back-to-back calls on the same inputs, median of 5 repeats, after
warm-up. Each figure is printed when measured; the table comes at the end. This is a
benchmark of the ways, not a judgement: `cudaopt check-model` (benchmarks/model_swap.py)
is the judged figure.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import cudaopt  # noqa: E402
from cudaopt.models.entry import load_entry, parse_entry  # noqa: E402
from cudaopt.models.extract import extract  # noqa: E402

CALLS, REPEATS, WARMUP = 10, 5, 3
GELU = ROOT / "benchmarks" / "triton_pairs" / "cuda" / "88_MinGPTNewGelu"
KB_ENTRY = """
    import importlib.util
    import torch

    def build(device="cuda"):
        spec = importlib.util.spec_from_file_location("kb_minigpt", {path!r})
        kb = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(kb)
        torch.manual_seed(0)
        model = kb.Model(*kb.get_init_inputs()).to(device).eval()
        return model, tuple(x.to(device) for x in kb.get_inputs())
"""


def per_call_ms(fn: Callable[..., Any], inputs: tuple[Any, ...]) -> float:
    """Median over repeats of the mean per-call time of back-to-back calls."""
    for _ in range(WARMUP):
        fn(*inputs)
    torch.cuda.synchronize()
    times = []
    for _ in range(REPEATS):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(CALLS):
            fn(*inputs)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / CALLS)
    return statistics.median(times)


def ways(inputs: tuple[Any, ...]) -> dict[str, Callable[[torch.nn.Module], Any]]:
    """Each way as a function of the model; exporting happens once per model."""
    def compiled(mode: str) -> Callable[[torch.nn.Module], Any]:
        return lambda m: torch.compile(m, mode=mode, fullgraph=True)

    return {"eager": lambda m: m, "compile (default)": compiled("default"),
            "compile (reduce-overhead)": compiled("reduce-overhead"),
            "torch.export": lambda m: torch.export.export(m, inputs).module()}


def measure(label: str, original: torch.nn.Module, swapped: torch.nn.Module,
            inputs: tuple[Any, ...], console: Console) -> list[tuple[str, str, float, float]]:
    rows = []
    with torch.no_grad():
        reference = original(*inputs).float()
        for way, make in ways(inputs).items():
            times = []
            for model in (original, swapped):
                torch._dynamo.reset()
                fn = make(model)
                out = fn(*inputs)
                torch.testing.assert_close(out.float(), reference, atol=2e-2, rtol=2e-2)
                times.append(per_call_ms(fn, inputs))
                del fn, out
            console.print(f"{label}, {way}: original {times[0]:.3f} ms, with the kernel "
                          f"{times[1]:.3f} ms ({times[0] / times[1]:.2f}x)", highlight=False)
            rows.append((label, way, times[0], times[1]))
    return rows


def tinylm(work: Path, console: Console) -> list[tuple[str, str, float, float]]:
    shutil.copy(ROOT / "tests" / "models" / "tinylm.py", work / "tinylm.py")
    entry = parse_entry(f"{work / 'tinylm.py'}:build_bf16")
    (norm,) = extract(entry, work / "tasks", "cuda", patterns=["blocks.*.norm*"])
    run = work / "tasks" / ".cudaopt" / "runs" / "norm"
    shutil.copytree(ROOT / "tests" / "models" / "rmsnorm_cuda", run / "best")
    (run / "meta.json").write_text(json.dumps({"task": str(norm.file)}))
    original, inputs = load_entry(entry, "cuda")
    swapped, _ = load_entry(entry, "cuda")
    cudaopt.swap(swapped, "blocks.*.norm*", run, inputs=inputs)
    return measure("tinylm bf16, RMSNorm x8", original, swapped, tuple(inputs), console)


def minigpt(kb: Path, work: Path, console: Console) -> list[tuple[str, str, float, float]]:
    source = kb / "level3" / "44_MiniGPTBlock.py"
    (work / "minigpt.py").write_text(textwrap.dedent(KB_ENTRY.format(path=str(source))))
    entry = parse_entry(f"{work / 'minigpt.py'}:build")
    (act,) = extract(entry, work / "kb_tasks", "cuda", patterns=["mlp.act"])
    original, inputs = load_entry(entry, "cuda")
    swapped, _ = load_entry(entry, "cuda")
    cudaopt.swap(swapped, "mlp.act", GELU, inputs=inputs, task=act.file)
    return measure("KB L3 44 MiniGPTBlock, NewGELU", original, swapped, tuple(inputs), console)


def table(rows: list[tuple[str, str, float, float]]) -> Table:
    out = Table(title="an accepted kernel, three ways (ms per call, back to back)")
    for name, justify in (("model", "left"), ("way", "left"), ("original", "right"),
                          ("kernel", "right"), ("speedup", "right")):
        out.add_column(name, justify=justify)  # type: ignore[arg-type]
    for label, way, before, after in rows:
        out.add_row(label, way, f"{before:.3f}", f"{after:.3f}", f"{before / after:.2f}x")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernelbench", type=Path, help="KernelBench's KernelBench/ folder")
    args = parser.parse_args()
    console = Console(width=80)
    with tempfile.TemporaryDirectory(prefix="cudaopt-model-ways-") as tmp:
        rows = tinylm(Path(tmp), console)
        if args.kernelbench:
            rows += minigpt(args.kernelbench, Path(tmp), console)
    console.print(table(rows))


if __name__ == "__main__":
    main()
