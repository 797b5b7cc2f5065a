"""False fails of the signal checks: honest candidates that round otherwise than the task.

    python benchmarks/honest_rounding.py KernelBench/ [--levels 1,2,3] [--limit N]
        [--max-elements E] [--device cpu|cuda]

For each KernelBench task (inputs shrunk to at most E elements where its module-level sizes
allow, as `input_dependence.py` does), five fresh draws from `get_inputs()`, three inputs of
other structure derived from a draw as the judge derives them, and two honest candidates for
each: the task's own Model run in float64 and cast back to the output's
dtype (rounded otherwise than float32's order of operations), and that result rounded to
bfloat16 (a kernel that writes bf16-accurate values). Both go through the signal checks the
judge runs (`cudaopt.judge.checks.tracker.Tracker`, the rounding noise measured as the judge
measures it). On `--device cuda` the task runs with torch's defaults, as in the judge
(cuDNN convolutions in TF32), and the float64 candidate without TF32. Prints every finding,
each a refusal of an honest kernel, then the counts per candidate.
"""

from __future__ import annotations

import argparse
import copy
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from identity import find_tasks  # noqa: E402
from input_dependence import _leaves, _load, scaled_source  # noqa: E402

from cudaopt.judge.checks.signal import perturbed  # noqa: E402
from cudaopt.judge.checks.tracker import Tracker  # noqa: E402
from cudaopt.judge.checks.variants import derive, plan  # noqa: E402

TOL = 1e-2
DRAWS = 5
ROUNDINGS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "float64": lambda t: t,
    "bf16": lambda t: t.to(torch.bfloat16).to(t.dtype),
}


def _wide(inputs: list[Any]) -> list[Any]:
    return [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x
            for x in inputs]


def scan(path: Path, device: str) -> dict[str, str]:
    """Per rounding, the first finding against its candidate ('' for none)."""
    task = _load(path, f"kb_honest_{abs(hash(path))}")
    torch.manual_seed(0)
    model = task.Model(*task.get_init_inputs()).eval().to(device)
    wide = copy.deepcopy(model).double()

    def draw(seed: int) -> list[Any]:
        torch.manual_seed(seed)
        return [x.to(device) if isinstance(x, torch.Tensor) else x for x in task.get_inputs()]

    def outputs(inputs: list[Any]) -> tuple[list[Any], list[Any]] | None:
        reference = _leaves(model(*inputs))
        if any(isinstance(r, torch.Tensor) and not torch.isfinite(r).all() for r in reference):
            return None  # the judge skips such a structured input
        return reference, [h.to(r.dtype) for h, r in zip(_leaves(wide(*_wide(inputs))),
                                                          reference, strict=True)]

    rand = random.Random(path.name)
    pairs = [(True, outputs(draw(100 + k))) for k in range(DRAWS)] + [
        (False, outputs(derive(draw(200), variant, draw)))
        for variant in plan(rand.random, lambda: rand.randrange(1 << 30))]
    pairs = [(fresh, both) for fresh, both in pairs if both is not None]
    noise = _leaves(model(*perturbed(draw(100), 7)))
    found = {}
    for name, rounding in ROUNDINGS.items():
        tracker = Tracker()
        tracker.reset(11)
        for fresh, (reference, honest) in pairs:
            tracker.record(reference, [rounding(h) for h in honest], fresh)
        tracker.measure_noise(noise)
        findings = tracker.findings(TOL)
        found[name] = findings[0] if findings else ""
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", type=Path, help="KernelBench's folder of level1..level3")
    parser.add_argument("--levels", default="1,2,3")
    parser.add_argument("--limit", type=int, default=None, help="tasks per level")
    parser.add_argument("--max-elements", type=int, default=1 << 20)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    tasks = [task for level in args.levels.split(",")
             for task in find_tasks([args.suite / f"level{level.strip()}"])[:args.limit]]
    torch.set_grad_enabled(False)
    torch.set_num_threads(1)
    counts: Counter[str] = Counter()
    with tempfile.TemporaryDirectory(prefix="honest-rounding-") as scratch:
        for number, (label, path) in enumerate(tasks, 1):
            start = time.perf_counter()
            try:
                source, elements = scaled_source(path, args.max_elements)
                if elements > args.max_elements:
                    raise ValueError(f"inputs of {elements} elements do not shrink enough")
                scaled = Path(scratch) / f"scaled_{number}.py"
                scaled.write_text(source)
                found = scan(scaled, args.device)
            except Exception as exc:  # noqa: BLE001 - a task this script cannot run
                counts["not run"] += 1
                print(f"[{number}/{len(tasks)}] {label}: not run ({type(exc).__name__})")
                continue
            counts["ran"] += 1
            for name, why in found.items():
                if why:
                    counts[f"{name} refused"] += 1
                    print(f"  {name} candidate refused on {label}: {why}")
            print(f"[{number}/{len(tasks)}] {label} ({time.perf_counter() - start:.1f} s)",
                  flush=True)
    print("\n" + ", ".join(f"{key}: {value}" for key, value in sorted(counts.items())))
    sys.exit(1 if counts["float64 refused"] else 0)


if __name__ == "__main__":
    main()
