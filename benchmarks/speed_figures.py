"""Both speed figures of the shipped examples, and how far each is from the hardware's limit.

    python benchmarks/speed_figures.py [--compile-mode default,max-autotune-no-cudagraphs]

Judges each example's candidate (CUDA examples on a GPU machine, the CPU one elsewhere) and
prints, per example: the cold per-call speedups (what the judge always reported), the warm
back-to-back ones (KernelBench's protocol), the summed-kernel-time one (CUDA Agent's), the
candidate's share of the roofline bound, the compile mode that won, and the reward, which
needs the cold and the warm figure to agree.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from cudaopt.judge import JudgeOptions, check

ROOT = Path(__file__).resolve().parent.parent
CUDA_EXAMPLES = ("fused_swish_cuda", "softplus_inline")
CPU_EXAMPLES = ("fused_swish_cpu",)


def _x(value: object) -> str:
    return f"{value:.2f}x" if isinstance(value, float) else "-"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--compile-mode", default="default")
    args = parser.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    names = CUDA_EXAMPLES if device == "cuda" else CPU_EXAMPLES
    rows = []
    for name in names:
        folder = ROOT / "examples" / name
        print(f"judging {name} on {device} …", flush=True)
        v = check(folder / "model.py", folder / "model_new.py",
                  JudgeOptions(device=device, compile_mode=args.compile_mode))
        warm = v.warm or {}
        roof = (v.roofline or {}).get("candidate", {})
        rows.append((name, _x(v.speedup_vs_eager), _x(v.speedup_vs_compile),
                     _x(warm.get("speedup_vs_eager")), _x(warm.get("speedup_vs_compile")),
                     _x(warm.get("kernel_speedup_vs_compile")),
                     f"{roof['pct_of_roofline']:.0f}%" if roof else "-",
                     v.compile_mode or "-", f"{v.reward:g}"))
    header = ("example", "cold/eag", "cold/cmp", "warm/eag", "warm/cmp", "kern/cmp", "roof",
              "mode", "reward")
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)))


if __name__ == "__main__":
    main()
