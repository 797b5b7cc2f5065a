"""Exposure of KernelBench to outputs that ignore the input, and whether cudaopt refuses them.

    python benchmarks/input_dependence.py /work/kernelbench/KernelBench [--levels 1,2,3]
        [--start S] [--limit N] [--max-elements E] [--device cpu|cuda] [--no-judge] [--json OUT]

For each task (inputs shrunk to at most E elements where the task's module-level sizes
allow, so that it runs on a CPU; a huge E and `--device cuda` keep KernelBench's sizes):
five fresh draws from `get_inputs()`, the reference's outputs on each, and two candidates
that ignore the input: a constant (the output of the first draw, returned for every input)
and zeros. A task "accepts" one when plain allclose (atol = rtol = 1e-2) holds on every
draw. Each accepted one then meets cudaopt's checks: the derived inputs of other structure
(`cudaopt.judge.checks.variants`) and the signal check (`cudaopt.judge.checks.signal`), the
same code the judge runs. With the judge on (the default), each task's own Model, renamed
ModelNew, is also judged through `cudaopt.judge.check` (verification only): it must pass, or
the new checks refuse correct code.

Prints a line per task as it goes, then the table per level: tasks, those that ran, those
accepting a constant and zeros, how many of those acceptances cudaopt refuses, the tasks
whose output is constant up to rounding ("no signal": a constant is the right answer
there, a mean of group-normalised values), and identity candidates passing.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from identity import find_tasks, identity_of  # noqa: E402

from cudaopt.judge import JudgeOptions, Status, check, outputs_vary  # noqa: E402
from cudaopt.judge.checks.signal import perturbed  # noqa: E402
from cudaopt.judge.checks.tracker import Tracker  # noqa: E402
from cudaopt.judge.checks.variants import derive, plan  # noqa: E402
from cudaopt.judge.workers.tensors import flatten  # noqa: E402

TOL = 1e-2
DRAWS = 5
MIN_SIZE = 32  # module-level integers at least this large are sizes that may shrink


def _load(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _input_elements(module: Any) -> int:
    """Elements of the inputs, and of the weights and outputs where the model runs on the
    meta device (a matmul with a small K has small inputs and a huge output, a wide MLP
    small inputs and gigabytes of weights)."""
    with torch.device("meta"):
        inputs = module.get_inputs()
        found = sum(x.numel() for x in inputs if isinstance(x, torch.Tensor))
        try:
            model = module.Model(*module.get_init_inputs())
            found += sum(p.numel() for p in model.parameters())
            found += sum(t.numel() for _, t in _meta_leaves(model(*inputs)))
        except Exception:  # noqa: BLE001 - an operator without a meta kernel: inputs only
            pass
    return found


def _meta_leaves(out: Any) -> list[tuple[str, torch.Tensor]]:
    if isinstance(out, torch.Tensor):
        return [("out", out)]
    if isinstance(out, (list, tuple)):
        return [leaf for item in out for leaf in _meta_leaves(item)]
    return []


def _shrunk(value: Any, factor: float) -> Any:
    if isinstance(value, int) and not isinstance(value, bool) and value >= MIN_SIZE:
        return max(MIN_SIZE // 2, int(value * factor))
    if isinstance(value, tuple) and value and all(isinstance(v, int) for v in value):
        return tuple(_shrunk(v, factor) for v in value)
    return value


def scaled_source(path: Path, max_elements: int) -> tuple[str, int]:
    """The task's source with its module-level sizes shrunk until its inputs (and weights
    and outputs) hold at most `max_elements` elements (the overrides appended at the end:
    `get_inputs` and `get_init_inputs` read them when called); and the elements it ends
    with."""
    source = path.read_text()
    module = _load(path, "kb_probe")
    elements = _input_elements(module)
    sizes = {k: v for k, v in vars(module).items()
             if not k.startswith("_") and _shrunk(v, 0.5) != v}
    factor, overrides = 1.0, {}
    while elements > max_elements and sizes and factor > 1e-4:
        factor /= 2
        overrides = {k: _shrunk(v, factor) for k, v in sizes.items()}
        for k, v in overrides.items():
            setattr(module, k, v)
        elements = _input_elements(module)
    lines = "".join(f"{k} = {v!r}\n" for k, v in overrides.items())
    return source + ("\n\n# shrunk to run on a CPU\n" + lines if lines else ""), elements


def _leaves(out: Any) -> list[torch.Tensor]:
    return [t for _, t in flatten(out)[1]]


def _close(a: list[torch.Tensor], b: list[torch.Tensor]) -> bool:
    return all(x.shape == y.shape and torch.allclose(x.double(), y.double(), atol=TOL,
                                                     rtol=TOL, equal_nan=True)
               for x, y in zip(a, b, strict=True))


def expose(path: Path, seed: int, device: str) -> dict[str, Any]:
    """Fresh draws, the two input-ignoring candidates under allclose, and the new checks."""
    task = _load(path, f"kb_task_{abs(hash(path))}")
    torch.manual_seed(0)
    with torch.device(device):
        model = task.Model(*task.get_init_inputs()).eval().to(device)

    def draw(s: int) -> list[Any]:
        torch.manual_seed(s)
        with torch.device(device):
            return [x.to(device) if isinstance(x, torch.Tensor) else x
                    for x in task.get_inputs()]

    with torch.no_grad():
        refs = [_leaves(model(*draw(seed + k))) for k in range(DRAWS)]
        floats = [i for i, t in enumerate(refs[0]) if t.is_floating_point()]
        constant = refs[0]
        zeros = [torch.zeros_like(t) for t in refs[0]]
        row: dict[str, Any] = {
            "constant": all(_close(constant, r) for r in refs[1:]) and bool(floats),
            "zeros": all(_close(zeros, r) for r in refs) and bool(floats)}
        if row["constant"] or row["zeros"]:
            derived, skipped = _derived_refs(model, draw, seed)
            noise = _leaves(model(*perturbed(draw(seed), seed)))
            row["skipped"] = skipped
            row["varies"] = outputs_vary(refs + derived, TOL, TOL, noise=noise)
            for name, fake in (("constant", constant), ("zeros", zeros)):
                if row[name]:
                    row[f"{name}_refused"] = _refused(refs, derived, fake, floats, seed,
                                                      noise)
    return row


def _derived_refs(model: Any, draw: Any, seed: int) -> tuple[list[list[torch.Tensor]], int]:
    rng = random.Random(seed)
    refs, skipped = [], 0
    for variant in plan(rng.random, lambda: rng.randrange(1, 1 << 40)):
        try:
            out = _leaves(model(*derive(draw(rng.randrange(1 << 30)), variant, draw)))
        except Exception:  # noqa: BLE001 - the judge skips such inputs too
            skipped += 1
            continue
        if all(bool(torch.isfinite(t).all()) for t in out if t.is_floating_point()):
            refs.append(out)
        else:
            skipped += 1
    return refs, skipped


def _refused(fresh: list[list[torch.Tensor]], derived: list[list[torch.Tensor]],
             fake: list[torch.Tensor], floats: list[int], seed: int,
             noise: list[torch.Tensor]) -> str:
    """How cudaopt refuses a candidate returning `fake` for every input ("" if it does not):
    a derived input on which allclose fails, or the signal check (with the reference's
    rounding noise measured as the judge does)."""
    if any(not _close(fake, r) for r in derived):
        return "derived input"
    tracker = Tracker()
    tracker.reset(seed)
    for refs, is_fresh in [(r, True) for r in fresh] + [(r, False) for r in derived]:
        tracker.record([refs[i] for i in floats], [fake[i] for i in floats], is_fresh)
    tracker.measure_noise(noise)
    return "signal" if tracker.findings(TOL) else ""


def identity_passes(path: Path, source: str, scratch: Path, device: str) -> tuple[bool, str]:
    """The real judge (verification only) on the task's own Model as the candidate."""
    folder = scratch / path.stem
    folder.mkdir(parents=True, exist_ok=True)
    task = folder / "task.py"
    task.write_text(source)
    verdict = check(task, identity_of(task, folder),
                    JudgeOptions(device=device, allow=["*"], profile=False))
    why = (verdict.violations or verdict.mismatch or [verdict.error])[0][:200]
    return verdict.status is Status.OK and verdict.correct, "" if verdict.correct else why


def run(tasks: list[tuple[str, Path]], max_elements: int, judge: bool,
        device: str) -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="input-dependence-") as scratch:
        for number, (label, path) in enumerate(tasks, 1):
            start = time.perf_counter()
            row: dict[str, Any] = {"task": label, "level": _level(label), "varies": True}
            try:
                source, elements = scaled_source(path, max_elements)
                if elements > max_elements:
                    raise ValueError(f"inputs of {elements} elements do not shrink enough")
                scaled = Path(scratch) / f"scaled_{number}.py"
                scaled.write_text(source)
                row.update(expose(scaled, seed=1000 + number, device=device))
                if judge:
                    row["identity"], row["identity_why"] = identity_passes(
                        path, source, Path(scratch) / str(number), device)
            except Exception as exc:  # noqa: BLE001 - a task this script cannot run
                row["error"] = f"{type(exc).__name__}: {exc}"[:200]
            rows.append(row)
            print(f"[{number}/{len(tasks)}] {label}: {_line(row)} "
                  f"({time.perf_counter() - start:.1f} s)", flush=True)
    return rows


def _level(label: str) -> str:
    return next((part for part in Path(label).parts if part.startswith("level")), "other")


def _line(row: dict[str, Any]) -> str:
    if "error" in row:
        return f"not run ({row['error']})"
    parts = []
    for name in ("constant", "zeros"):
        if row[name]:
            how = row.get(f"{name}_refused") or (
                "NOT REFUSED" if row["varies"] else "not refused: the output is constant "
                "up to rounding, so is the right answer")
            parts.append(f"accepts {name} (cudaopt: {how})")
    if "identity" in row:
        parts.append("identity passes" if row["identity"] else
                     f"IDENTITY FAILS: {row['identity_why']}")
    return "; ".join(parts) or "refuses both under allclose"


def table(rows: list[dict[str, Any]]) -> str:
    head = (f"{'level':<8}{'tasks':>6}{'ran':>5}{'const ok':>9}{'zeros ok':>9}"
            f"{'refused':>9}{'no signal':>10}{'identity ok':>12}")
    lines = [head, "-" * len(head)]
    for level in sorted({r["level"] for r in rows}) + ["all"]:
        mine = [r for r in rows if level in ("all", r["level"])]
        ran = [r for r in mine if "error" not in r]
        accepted = [(r, n) for r in ran for n in ("constant", "zeros") if r[n]]
        refused = sum(1 for r, n in accepted if r.get(f"{n}_refused"))
        constant = len({r["task"] for r, n in accepted
                        if not r.get(f"{n}_refused") and not r["varies"]})
        judged = [r for r in ran if "identity" in r]
        ident = f"{sum(r['identity'] for r in judged)}/{len(judged)}" if judged else "-"
        lines.append(f"{level:<8}{len(mine):>6}{len(ran):>5}"
                     f"{sum(r['constant'] for r in ran):>9}{sum(r['zeros'] for r in ran):>9}"
                     f"{f'{refused}/{len(accepted)}':>9}{constant:>10}{ident:>12}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", type=Path, help="KernelBench's folder of level1..level3")
    parser.add_argument("--levels", default="1,2,3")
    parser.add_argument("--limit", type=int, default=None, help="tasks per level")
    parser.add_argument("--start", type=int, default=0, help="skip this many tasks per level")
    parser.add_argument("--max-elements", type=int, default=1 << 22,
                        help="shrink each task's inputs to this many elements (CPU-sized)")
    parser.add_argument("--device", default="cpu", help="cpu, or cuda for full-sized tasks")
    parser.add_argument("--no-judge", action="store_true",
                        help="skip judging identity candidates (the slow part)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    tasks = []
    for level in args.levels.split(","):
        folder = args.suite / f"level{level.strip()}"
        if not folder.is_dir():
            sys.exit(f"no {folder}: pass KernelBench's folder holding level1, level2, level3")
        found = find_tasks([folder])[args.start:]
        tasks += found[:args.limit]
    torch.set_grad_enabled(False)
    rows = run(tasks, args.max_elements, judge=not args.no_judge, device=args.device)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    print("\n" + table(rows))
    missed = [r["task"] for r in rows for n in ("constant", "zeros")
              if r.get(n) and r.get("varies") and not r.get(f"{n}_refused")]
    false_fails = [r["task"] for r in rows if r.get("identity") is False]
    for task in missed:
        print(f"not refused: {task}")
    for task in false_fails:
        print(f"identity refused: {task}")
    sys.exit(1 if missed or false_fails else 0)


if __name__ == "__main__":
    main()
