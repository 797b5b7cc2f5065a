"""Naming the step a composition failed in. A random chain can trip any of torch's own
checks (a BatchNorm over `[1, C]` refuses to train), in sizing as well as in a filter; such
a failure rejects that one composition, at that step, in its manifest line, where ending
the run would lose the tries still to come."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

#: How much of an error a manifest line keeps: the exception's type and first words.
ERROR_CHARS = 400


class Rejected(Exception):
    """A composition stopped at `step`; `error` says why, in a line."""

    def __init__(self, step: str, error: str) -> None:
        super().__init__(f"{step}: {error}")
        self.step, self.error = step, error


@contextmanager
def step(name: str) -> Iterator[None]:
    """Whatever the block raises rejects the composition at `name`; a rejection already
    named by an inner step keeps its name."""
    try:
        yield
    except Rejected:
        raise
    except Exception as exc:  # noqa: BLE001 - torch raises anything for a bad chain
        raise Rejected(name, brief(exc)) from exc


def brief(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:ERROR_CHARS]
