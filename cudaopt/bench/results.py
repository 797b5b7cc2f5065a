"""`BENCH/results.jsonl`: one JSON object per task, appended (and flushed to disk) the moment
the task is done, so a killed bench loses nothing finished. A line is keyed by its task and
by what was judged (task and candidate content, or the agent settings): a re-run skips a
line whose key still matches and re-judges one whose task or candidate changed."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from cudaopt.executor import JobResult

RESULTS = "results.jsonl"
#: Verdict fields copied into a line as they are (`Verdict.to_json()` names).
VERDICT_FIELDS = ("status", "compiled", "correct", "reward", "speedup_vs_eager",
                  "speedup_vs_compile", "speedup_vs_eager_low", "speedup_vs_compile_low",
                  "eager_ms", "compile_ms", "candidate_ms", "eager_spread_ms",
                  "compile_spread_ms", "candidate_spread_ms", "violations", "warnings",
                  "build_s", "verify_s", "profile_s", "phases_s", "remeasured", "device",
                  "timing_cpu", "backend", "kernels_ran", "isolated", "warm", "noisy",
                  "device_memory_gib")
#: What a job's result carries beside its verdict, copied into its line as it is: an agent
#: run's, the build ahead, and each failed attempt's infrastructure error (`infra_errors`:
#: a slot that died, a judgement short of device memory beside other lanes)
_EXTRA_FIELDS = ("steps", "cost_usd", "run_dir", "stop_reason", "build_ahead_s", "built_ahead",
                 "infra_errors")
ERROR_CHARS = 2000


def blank_line(task_id: str, level: str, key: str, **fields: Any) -> dict[str, Any]:
    """A line with every field present; a task nothing was judged for scores -1."""
    line: dict[str, Any] = {"task": task_id, "level": level, "key": key,
                            "infra_status": "ok", "infra_error": None}
    line.update({name: None for name in VERDICT_FIELDS})
    line.update(status="no_candidate", compiled=False, correct=False, reward=-1.0,
                violations=[], warnings=[], error="", steps=0, cost_usd=0.0, wall_s=0.0,
                queue_s=0.0, slot="", device_name="", torch_version="", attempts=0,
                finished=_now())
    line.update(fields)
    return line


def line_from_result(base: dict[str, Any], result: JobResult, queue_s: float) -> dict[str, Any]:
    """Fill `base` from what came back. An infrastructure error leaves the score empty: the
    machine failed the task, the candidate or model did not."""
    line = dict(base, slot=result.slot, device_name=result.device_name,
                torch_version=result.torch_version, wall_s=round(result.wall_s, 3),
                queue_s=round(queue_s, 3), attempts=result.attempts, finished=_now())
    line.update({k: v for k, v in result.extra.items() if k in _EXTRA_FIELDS})
    if result.infra_error is not None:
        line.update(status="infra_error", infra_status="error", reward=None,
                    infra_error=result.infra_error[-ERROR_CHARS:])
        return line
    verdict = result.verdict
    if verdict is None:  # an agent run that never produced a kernel worth re-checking
        line.update(status="no_kernel")
        return line
    line.update({name: verdict.get(name) for name in VERDICT_FIELDS})
    line["error"] = (verdict.get("error") or "")[-ERROR_CHARS:]
    line["device_name"] = line["device_name"] or verdict.get("device_name", "")
    line["torch_version"] = line["torch_version"] or verdict.get("torch_version", "")
    return line


def failed(line: dict[str, Any]) -> bool:
    """What `--retry-failed` re-runs: the machine's failures and the candidate's."""
    return line.get("infra_status") != "ok" or not line.get("correct")


def read_lines(bench: Path) -> list[dict[str, Any]]:
    """Every complete line; a line cut short by a kill (no newline) is ignored."""
    path = bench / RESULTS
    if not path.exists():
        return []
    lines = []
    for text in path.read_text().splitlines():
        try:
            lines.append(json.loads(text))
        except json.JSONDecodeError:
            continue
    return lines


def latest(lines: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The last line of each task (a file edited by hand may repeat one)."""
    return {line["task"]: line for line in lines if "task" in line}


def rewrite(bench: Path, lines: list[dict[str, Any]]) -> None:
    """Replace the file at once (drop lines about to be re-run): never half-written."""
    path = bench / RESULTS
    tmp = path.with_name(RESULTS + ".tmp")
    tmp.write_text("".join(json.dumps(line) + "\n" for line in lines))
    tmp.replace(path)


def append(bench: Path, line: dict[str, Any]) -> None:
    """One line, on disk before this returns. A line cut short by a kill is closed first,
    so it cannot swallow this one."""
    with open(bench / RESULTS, "ab+") as handle:
        if handle.seek(0, os.SEEK_END):
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) != b"\n":
                handle.write(b"\n")
        handle.write((json.dumps(line) + "\n").encode())
        handle.flush()
        os.fsync(handle.fileno())


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
