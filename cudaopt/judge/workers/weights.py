"""The weights a candidate loads, written by the reference worker with the digest of the
bytes it wrote: what a lender checks before it keeps them (`lending.keep_state`)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import IO, Any, cast

import torch


def save_state(state: dict[str, Any], path: Path, digest: bool) -> str | None:
    """Write the weights the candidate loads; with `digest`, the digest of the very bytes
    this process wrote, taken as it writes them (never read back from the file), so a
    candidate that writes to the file later cannot make a lender keep its version
    (`lending.keep_state`)."""
    if not digest:
        torch.save(state, path)
        return None
    with open(path, "wb") as file:
        writer = _Hashing(file)
        torch.save(state, cast(IO[bytes], writer))  # streamed: never held twice
    return writer.sha256.hexdigest()


class _Hashing:
    """A file that hashes what is written to it, as torch.save writes it."""

    def __init__(self, file: Any):
        self.file, self.sha256 = file, hashlib.sha256()

    def write(self, data: Any) -> int:
        self.sha256.update(data)
        return self.file.write(data)

    def flush(self) -> None:
        self.file.flush()
