"""What a trainer imports: `EnvClient` (blocking) and `AsyncEnvClient` (asyncio) for the
reward service's endpoints. Standard library only, so it drops into any RL framework."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any


class EnvError(RuntimeError):
    """The service refused a request: `status` and its `code` (e.g. 401 "unauthorized",
    410 "episode_lost", 503 "busy" with `retry_after_s`)."""

    def __init__(self, status: int, code: str, message: str, retry_after_s: float | None):
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code, self.retry_after_s = status, code, retry_after_s


class EnvClient:
    """`token` or `token_file` (the service's --token-file). A busy answer (503) is retried
    after the Retry-After the service gives, up to `busy_wait_s` in all."""

    def __init__(self, url: str = "http://127.0.0.1:8765", token: str | None = None,
                 token_file: str | Path | None = None, timeout_s: float = 7200.0,
                 busy_wait_s: float = 600.0):
        if token is None and token_file is not None:
            token = Path(token_file).expanduser().read_text().strip()
        self.url, self.token = url.rstrip("/"), token
        self.timeout_s, self.busy_wait_s = timeout_s, busy_wait_s

    def health(self) -> dict[str, Any]:
        return self.request("GET", "/health")

    def verify(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """items: {"task", "model_new", "kernels"?, "task_name"?} -> results in order:
        {"reward", "correct", "infra_error", "verdict", ...}. A result with `infra_error`
        set has reward None: leave that sample out of training."""
        return self.request("POST", "/verify", {"items": items})["results"]

    def reset(self, task: str, task_name: str = "model.py",
              episode_id: str | None = None, backend: str = "cuda") -> dict[str, Any]:
        """A new episode; `backend` ("cuda" or "triton") is the language its skill teaches."""
        body: dict[str, Any] = {"task": task, "task_name": task_name, "backend": backend}
        if episode_id is not None:
            body["episode_id"] = episode_id
        return self.request("POST", "/reset", body)

    def step(self, episode_id: str, tool: str | None = None,
             args: dict[str, str] | None = None, message: str = "") -> dict[str, Any]:
        """One tool call (`tool`, `args` as in `optimize`), or `tool=None` to end the turn."""
        action: dict[str, Any] = {"message": message} if message else {}
        if tool is not None:
            action.update(tool=tool, args=args or {})
        return self.request("POST", "/step", {"episode_id": episode_id, "action": action})

    def state(self, episode_id: str) -> dict[str, Any]:
        return self.request("POST", "/state", {"episode_id": episode_id})

    def request(self, method: str, path: str, body: Any = None) -> dict[str, Any]:
        give_up = time.monotonic() + self.busy_wait_s
        while True:
            try:
                return self._once(method, path, body)
            except EnvError as exc:
                wait = exc.retry_after_s or 1.0
                if exc.status != 503 or time.monotonic() + wait > give_up:
                    raise
                time.sleep(wait)

    def _once(self, method: str, path: str, body: Any) -> dict[str, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise _error(exc) from None


class AsyncEnvClient:
    """The same calls as coroutines (each runs the blocking client in a worker thread, so
    many episodes can be driven from one event loop)."""

    def __init__(self, *args: Any, **kwargs: Any):
        self.sync = EnvClient(*args, **kwargs)

    async def health(self) -> dict[str, Any]:
        return await asyncio.to_thread(self.sync.health)

    async def verify(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return await asyncio.to_thread(self.sync.verify, items)

    async def reset(self, task: str, task_name: str = "model.py",
                    episode_id: str | None = None, backend: str = "cuda") -> dict[str, Any]:
        return await asyncio.to_thread(self.sync.reset, task, task_name, episode_id, backend)

    async def step(self, episode_id: str, tool: str | None = None,
                   args: dict[str, str] | None = None, message: str = "") -> dict[str, Any]:
        return await asyncio.to_thread(self.sync.step, episode_id, tool, args, message)

    async def state(self, episode_id: str) -> dict[str, Any]:
        return await asyncio.to_thread(self.sync.state, episode_id)


def _error(exc: urllib.error.HTTPError) -> EnvError:
    try:
        error = json.loads(exc.read()).get("error", {})
    except (ValueError, AttributeError):
        error = {}
    retry = exc.headers.get("Retry-After") if exc.headers else None
    return EnvError(exc.code, error.get("code", "http_error"),
                    error.get("message", str(exc)), float(retry) if retry else None)
