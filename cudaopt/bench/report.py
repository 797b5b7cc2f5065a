"""A bench folder's record and reports: `bench.json` (what was benched, and the wall time of
each invocation, whose sum is the bench's wall time), then the summary files rebuilt from
results.jsonl alone, so `bench show` gives the same table at any later time."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from cudaopt.bench import plot, render, results
from cudaopt.bench.metrics import summarize

META = "bench.json"


class NotABench(ValueError):
    pass


def read_meta(bench: Path) -> dict[str, Any]:
    path = bench / META
    return json.loads(path.read_text()) if path.is_file() else {"sessions": []}


@contextmanager
def session(bench: Path, info: dict[str, Any]) -> Iterator[None]:
    """Record one invocation in bench.json: its settings, and its wall time even when it is
    interrupted."""
    bench.mkdir(parents=True, exist_ok=True)
    meta = read_meta(bench)
    meta.update({k: v for k, v in info.items() if v is not None})
    entry = {"started": datetime.now(timezone.utc).isoformat(timespec="seconds"), "wall_s": 0.0}
    meta["sessions"].append(entry)
    started = time.perf_counter()
    _write_meta(bench, meta)
    try:
        yield
    finally:
        entry["wall_s"] = round(time.perf_counter() - started, 3)
        _write_meta(bench, meta)


def _write_meta(bench: Path, meta: dict[str, Any]) -> None:
    tmp = bench / (META + ".tmp")
    tmp.write_text(json.dumps(meta, indent=2) + "\n")
    tmp.replace(bench / META)


def load(bench: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The latest line of each task, and the summary of them."""
    if not (bench / results.RESULTS).is_file():
        raise NotABench(f"{bench} is not a bench folder: it has no {results.RESULTS}")
    lines = list(results.latest(results.read_lines(bench)).values())
    elapsed = sum(s.get("wall_s", 0.0) for s in read_meta(bench)["sessions"]) or None
    return lines, summarize(lines, elapsed)


def write(bench: Path) -> tuple[dict[str, Any], list[Path], str | None]:
    """summary.json/.csv/.md (and .png with the `plot` extra); the last item says how to
    get the PNG when it could not be made."""
    lines, summary = load(bench)
    title = f"cudaopt bench: {bench.name}"
    paths = render.write_summary(bench, summary, title)
    png = plot.write_png(lines, bench / "summary.png", title)
    if png is not None:
        paths.append(png)
    hint = None if png is not None else f"for summary.png: {plot.INSTALL_HINT}"
    return summary, paths, hint
