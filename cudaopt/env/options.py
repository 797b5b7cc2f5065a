"""The service's settings: one plain object the CLI fills and tests construct directly."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from cudaopt.judge import JudgeOptions

MiB = 1 << 20


@dataclass
class ServiceOptions:
    """Limits are per request, per episode or per slot; every one is enforced before the
    work it bounds starts, so an over-limit request costs nothing."""

    root: Path  # state: episodes (run directories), the executor's sources, the token
    judge: JudgeOptions = field(default_factory=JudgeOptions)
    sandbox: str = "auto"  # the episodes' shell and judge workers, as in `optimize`
    host: str = "127.0.0.1"
    port: int = 8765
    # /verify
    queue_per_slot: int = 64  # candidates waiting per slot before /verify answers busy
    max_items: int = 256  # candidates in one /verify request
    verify_timeout_s: float = 3600.0  # a candidate not judged by then is the service's fault
    # episodes
    max_episodes: int = 8  # running at once, over all slots
    max_steps: int = 40  # optimize's stopping rules, per episode
    episode_minutes: float = 60.0
    context_tokens: int | None = None  # the policy's window: what is sent past it is compacted
    idle_s: float = 600.0  # an episode waiting this long for its next action is ended
    episode_disk_mb: int = 2048  # run directory: workspace, builds, candidates
    bash_timeout_s: float = 600.0
    keep_done_s: float = 3600.0  # finished episodes answer /state from memory this long
    # requests
    max_request_bytes: int = 16 * MiB
    max_field_bytes: int = MiB  # one file's content, one command

    @property
    def episodes_dir(self) -> Path:
        return self.root / "episodes"

    @property
    def executor_dir(self) -> Path:
        return self.root / "executor"
