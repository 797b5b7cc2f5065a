"""The machine judge's messages: one JSON line each way, with the descriptors of a lease
(`workers.lending`) riding on a Unix socket beside the first bytes (SCM_RIGHTS)."""

from __future__ import annotations

import json
import os
import socket
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: A Unix socket's path holds at most this many bytes (Linux's sockaddr_un, less its NUL)
SOCKET_PATH_BYTES = 107


def socket_parent(below_bytes: int) -> Path:
    """The system's temporary folder, or /tmp where that is too deep for a socket path
    `below_bytes` long under it (a test's or a batch job's own TMPDIR): binding there would
    fail, and every judgement would start cold."""
    root = Path(tempfile.gettempdir())
    fits = len(os.fsencode(root)) + 1 + below_bytes <= SOCKET_PATH_BYTES
    return root if fits else Path("/tmp")


def read_message(conn: socket.socket, limit_bytes: int = 64 << 20) -> tuple[dict[str, Any],
                                                                          list[int]]:
    """One JSON line and the descriptors that came with it ({} where it is not one)."""
    data, fds = b"", []
    while not data.endswith(b"\n") and len(data) < limit_bytes:
        chunk, more, _, _ = socket.recv_fds(conn, 1 << 16, 64)
        fds += more
        if not chunk:
            break
        data += chunk
    try:
        message = json.loads(data)
    except ValueError:
        message = None
    return (message if isinstance(message, dict) else {}), fds


def write_message(conn: socket.socket, message: dict[str, Any],
                  fds: Sequence[int] = ()) -> None:
    """The descriptors ride with the first bytes. Nothing is sent after the last byte: a
    peer that has read its line may have closed, and even an empty send would then fail,
    making a delivered lease look undelivered."""
    data = (json.dumps(message) + "\n").encode()
    sent = socket.send_fds(conn, [data[:1 << 16]], list(fds)) if fds else 0
    if sent < len(data):
        conn.sendall(data[sent:])


def close_all(fds: list[int]) -> None:
    for fd in fds:
        os.close(fd)
