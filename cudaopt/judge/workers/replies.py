"""Fields read from a worker's reply, as hostile input.

The candidate's worker runs the candidate's code, which can rewrite the worker itself
(its command table, its replies) through the interpreter: a reply from it is whatever the
candidate chose to send. Nothing in one decides a verdict on its own (outputs are bound by
their digest, times come from the judge's clock, the list of outputs compared is the
judge's); what the judge still reads from one must at least be of the right type, so a
forged field fails loudly as the candidate's fault instead of deep inside the judge.
"""

from __future__ import annotations

import math
import re
from typing import Any

from cudaopt.judge.workers.runner import WorkerFailure

_DIGEST = re.compile(r"[0-9a-f]{64}")


def _malformed(key: str, value: Any) -> WorkerFailure:
    return WorkerFailure("crash", f"the candidate's worker sent a malformed reply: {key} = "
                                  f"{str(value)[:80]!r}")


def number(reply: dict[str, Any], key: str) -> float:
    """A finite, non-negative number (a time, a size)."""
    value = reply.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            math.isfinite(value) and value >= 0):
        raise _malformed(key, value)
    return float(value)


def strings(reply: dict[str, Any], key: str) -> list[str]:
    """A list of strings (violations, warnings); absent is empty."""
    value = reply.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _malformed(key, value)
    return value


def digest_of(reply: dict[str, Any], key: str = "digest") -> str:
    """A commitment to outputs (see `digest`); empty when the reply holds none, which no
    output ever matches."""
    value = reply.get(key, "")
    return value if isinstance(value, str) and _DIGEST.fullmatch(value) else ""
