"""What runs inside each worker process: the entry point and the reference and candidate
roles, built from every stage's in-process half (the guard, the stream checks, the bench
loops, the pinned timing thread). The parent starts them by module path and never imports
them, which is why they can sit above every stage they assemble."""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")


def made(part: T | None, by: str) -> T:
    """A worker's `part` that its step `by` makes. The judge sends that step first, so a
    missing part means the protocol was broken: say so, not "NoneType has no attribute"."""
    if part is None:
        raise RuntimeError(f"a step came before `{by}`, which makes what it needs")
    return part
