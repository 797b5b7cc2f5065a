"""The reward service: an executor for `/verify`, episodes for `/reset` `/step` `/state`,
and the HTTP front, wired together. The executor is passed in, so a cluster executor
serves the same endpoints as the local one (`build_executor` is what the CLI uses)."""

from __future__ import annotations

import os
import secrets
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

from cudaopt.env import validate
from cudaopt.env.episodes import EpisodeManager
from cudaopt.env.http import EnvHTTPServer
from cudaopt.env.options import ServiceOptions
from cudaopt.env.verify import Verifier
from cudaopt.executor import Executor, SlotSpec, make_executor
from cudaopt.sandbox import SandboxLimits, resolve_sandbox

VERSION = 1


def build_executor(options: ServiceOptions, device: str, gpus: list[int] | None,
                   max_attempts: int = 2, workers: int = 1, ray: str | None = None) -> Executor:
    """Where /verify judges: this machine's slot processes (one per GPU, or `workers` CPU
    slots), or with `ray` a Ray cluster's; candidate workers in the same sandbox as
    `optimize`'s."""
    return make_executor(device, gpus, ray=ray, workers=workers, root=options.executor_dir,
                         sandbox=options.sandbox, max_attempts=max_attempts,
                         job_timeout_s=options.verify_timeout_s)


class EnvService:
    """Start with `serve_forever()` (or `start()` for a background thread); `close()` stops
    the front, the episodes and the executor."""

    def __init__(self, options: ServiceOptions, executor: Executor, token: str,
                 episode_slots: list[SlotSpec] | None = None):
        self.options, self.executor = options, executor
        limits = SandboxLimits(workspace_mb=options.episode_disk_mb)
        sandbox = resolve_sandbox(options.sandbox, limits=limits)
        # a reward reads no per-kernel breakdown: /verify skips its profiled burst
        self.verifier = Verifier(executor, replace(options.judge, breakdown=False),
                                 options.queue_per_slot,
                                 options.verify_timeout_s)
        # Episodes run their workspace and warm judge here, on this machine's own slots.
        self.episodes = EpisodeManager(options, executor.slots if episode_slots is None else
                                       episode_slots, sandbox)
        self.http = EnvHTTPServer((options.host, options.port), token,
                                  options.max_request_bytes, self._routes())
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.http.server_address[:2]
        assert isinstance(host, str)  # an AF_INET server's address
        return f"http://{host}:{port}"

    def _routes(self) -> dict[tuple[str, str], Any]:
        opts = self.options
        return {
            ("GET", "/health"): lambda _: self.health(),
            ("POST", "/verify"): lambda body: {
                "results": self.verifier.verify(validate.verify_items(body, opts))},
            ("POST", "/reset"): lambda body: self.episodes.reset(
                *validate.reset_body(body, opts)),
            ("POST", "/step"): lambda body: self.episodes.step(
                *validate.step_body(body, opts)),
            ("GET", "/state"): lambda query: self.episodes.state(
                validate.episode_id_of(query)),
            ("POST", "/state"): lambda body: self.episodes.state(
                validate.episode_id_of(body)),
        }

    def health(self) -> dict[str, Any]:
        """No token needed: says nothing a caller could misuse."""
        return {"status": "healthy", "version": VERSION,
                "slots": [s.name for s in self.executor.slots],
                "verify": {"pending": self.verifier.pending,
                           "capacity": self.verifier.capacity},
                "episodes": self.episodes.counts()}

    def serve_forever(self) -> None:
        self.http.serve_forever(poll_interval=0.2)

    def start(self) -> EnvService:
        self._thread = threading.Thread(target=self.serve_forever, daemon=True,
                                        name="env-http")
        self._thread.start()
        return self

    def close(self) -> None:
        if self._thread is not None:
            self.http.shutdown()
        self.http.server_close()
        self.episodes.close()
        self.executor.close()


def load_token(path: Path | None, root: Path) -> tuple[str, Path]:
    """The token from `path`, or a new one written to `root/token` (mode 0600)."""
    if path is not None:
        token = path.read_text().strip()
        if len(token) < 16:
            raise ValueError(f"{path}: the token must be at least 16 characters")
        return token, path
    target = root / "token"
    if not target.is_file():
        root.mkdir(parents=True, exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_urlsafe(32) + "\n")
    return target.read_text().strip(), target

