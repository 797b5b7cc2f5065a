"""Kernel speedup vs what it adds up to end to end, on a bf16 transformer on CUDA.

    python benchmarks/model_swap.py

Profiles the test suite's small transformer (4 layers, width 1024, 8 x 256 tokens, bf16),
extracts its RMSNorm layers as one task, swaps the CUDA RMSNorm kernel of
tests/models/rmsnorm_cuda into all eight, and judges the whole model: the table shows the
kernel's speedup on its own task next to the whole model's.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

from rich.console import Console

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cudaopt.judge import JudgeOptions  # noqa: E402
from cudaopt.models.entry import load_entry, parse_entry  # noqa: E402
from cudaopt.models.extract import extract  # noqa: E402
from cudaopt.models.profile import profile_model  # noqa: E402
from cudaopt.models.report import model_check_lines, model_check_table, profile_table  # noqa: E402
from cudaopt.models.wholemodel import check_model  # noqa: E402

MODELS = ROOT / "tests" / "models"


def main() -> None:
    console = Console(width=80)
    with tempfile.TemporaryDirectory(prefix="cudaopt-model-swap-") as tmp:
        work = Path(tmp)
        shutil.copy(MODELS / "tinylm.py", work / "tinylm.py")
        entry = parse_entry(f"{work / 'tinylm.py'}:build_bf16")
        model, inputs = load_entry(entry, "cuda")
        console.print(profile_table(profile_model(model, inputs, "cuda", iters=20), rows=12))
        del model
        (norm,) = extract(entry, work / "tasks", "cuda", patterns=["blocks.*.norm*"])
        run = work / "tasks" / ".cudaopt" / "runs" / "norm"
        shutil.copytree(MODELS / "rmsnorm_cuda", run / "best")
        (run / "meta.json").write_text(json.dumps({"task": str(norm.file)}))
        result = check_model(entry, [("blocks.*.norm*", str(run))],
                             JudgeOptions(device="cuda"), lambda m: console.print(m))
        console.print(model_check_table(result))
        for line in model_check_lines(result):
            console.print(line, highlight=False)


if __name__ == "__main__":
    main()
