"""The HTTP front: routing, the bearer token, size limits and JSON errors, over the
standard library's threading server (no web framework to install on a GPU box)."""

from __future__ import annotations

import hmac
import json
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from cudaopt.env.errors import ServiceError, bad

Route = Callable[[dict[str, Any]], dict[str, Any]]


class EnvHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], token: str, max_request_bytes: int,
                 routes: dict[tuple[str, str], Route], open_paths: tuple[str, ...] = ("/health",)):
        super().__init__(address, _Handler)
        self.token, self.max_request_bytes = token.encode(), max_request_bytes
        self.routes, self.open_paths = routes, open_paths


class _Handler(BaseHTTPRequestHandler):
    server: EnvHTTPServer
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._handle("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._handle("POST")

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """Quiet: a training run sends thousands of requests."""

    def _handle(self, method: str) -> None:
        url = urlsplit(self.path)
        self._unread = method == "POST"
        try:
            route = self.server.routes.get((method, url.path))
            if route is None:
                known = any(path == url.path for _, path in self.server.routes)
                raise ServiceError(405 if known else 404,
                                   f"{method} {url.path}: no such endpoint", code="not_found")
            if url.path not in self.server.open_paths:
                self._authorize()
            body = self._body() if method == "POST" else _query(url.query)
            self._send(200, route(body))
        except ServiceError as exc:
            if self._unread:
                self.close_connection = True  # the body left unread would be the next request
            self._send(exc.status, exc.to_json(), exc.retry_after_s)
        except Exception as exc:  # noqa: BLE001 - the service's own fault: a 500, and say so
            self._send(500, {"error": {"code": "internal", "message":
                                       f"{type(exc).__name__}: {exc}"}})

    def _authorize(self) -> None:
        header = self.headers.get("Authorization", "")
        scheme, _, given = header.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(),
                                                                 self.server.token):
            raise ServiceError(401, "missing or wrong token: send 'Authorization: Bearer "
                               "<token>' with the token from the service's --token-file",
                               code="unauthorized")

    def _body(self) -> Any:
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            raise ServiceError(411, "a Content-Length header is required",
                               code="length_required") from None
        if length > self.server.max_request_bytes:
            self._discard(length)
            raise ServiceError(413, f"request body of {length} bytes: the limit is "
                               f"{self.server.max_request_bytes}", code="too_large")
        raw = self.rfile.read(length)
        self._unread = False
        try:
            return json.loads(raw or b"{}")
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise bad(f"the body is not valid JSON: {exc}") from None

    def _discard(self, length: int) -> None:
        """Read an oversized body into nothing, so the client, still sending, gets the 413
        rather than a broken pipe; past 4x the limit, hang up instead."""
        if length > 4 * self.server.max_request_bytes:
            return
        while length > 0:
            chunk = self.rfile.read(min(length, 1 << 20))
            if not chunk:
                return
            length -= len(chunk)
        self._unread = False

    def _send(self, status: int, body: dict[str, Any], retry_after_s: int | None = None) -> None:
        data = json.dumps(body, default=str).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if retry_after_s is not None:
            self.send_header("Retry-After", str(retry_after_s))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)


def _query(query: str) -> dict[str, str]:
    return {key: values[-1] for key, values in parse_qs(query).items()}
