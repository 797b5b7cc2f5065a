"""The commitment read from a worker's reply, as hostile input.

The candidate's worker runs the candidate's code, which can rewrite the worker itself
(its command table, its replies): a reply from it is whatever the candidate chose to send.
The fields every step reads are type-checked when the reply arrives (`child._hostile`);
the digest a call committed to is read here, and anything but a digest is none.
"""

from __future__ import annotations

import re
from typing import Any

_DIGEST = re.compile(r"[0-9a-f]{64}")


def digest_of(reply: dict[str, Any], key: str = "digest") -> str:
    """A commitment to outputs (see `digest`); empty when the reply holds none, which no
    output ever matches."""
    value = reply.get(key, "")
    return value if isinstance(value, str) and _DIGEST.fullmatch(value) else ""
