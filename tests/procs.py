"""The live processes of this host, found by their command lines: how tests see what a
command started, left behind or closed. Light enough to import inside a slot process
(`tests.executor.plugin`)."""

from __future__ import annotations

from pathlib import Path


def processes(*marks: str, parent: int | None = None) -> list[int]:
    """Processes whose command line (its arguments joined by spaces) holds every one of
    `marks`; with `parent`, only that process's children."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(
                errors="replace")
            if parent is not None and _parent(entry) != parent:
                continue
        except (OSError, IndexError, ValueError):  # gone, or not ours to read
            continue
        if all(mark in line for mark in marks):
            found.append(int(entry.name))
    return found


def _parent(entry: Path) -> int:
    return int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])


def descendants(pids: set[int]) -> set[int]:
    """Every live process below `pids` (their children, theirs, and so on)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                children.setdefault(_parent(entry), []).append(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue  # gone meanwhile
    found: set[int] = set()
    queue = list(pids)
    while queue:
        for child in children.get(queue.pop(), []):
            if child not in found:
                found.add(child)
                queue.append(child)
    return found
