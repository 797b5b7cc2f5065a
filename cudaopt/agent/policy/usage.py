"""What one model call was billed: tokens in (cached or not), tokens out and the price,
as litellm reports them. Summed per run for `--max-cost`, the live view and `show`."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any


@dataclass
class Usage:
    prompt_tokens: int = 0  # all tokens in, cached ones included
    cached_tokens: int = 0  # read from the provider's prompt cache (billed at a discount)
    cache_write_tokens: int = 0  # written to the cache (billed at a premium by some)
    completion_tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0

    @property
    def uncached_tokens(self) -> int:
        return max(0, self.prompt_tokens - self.cached_tokens)

    def add(self, other: Usage) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "uncached_tokens": self.uncached_tokens}

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Usage:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in (data or {}).items() if k in names})

    def describe(self) -> str:
        """"12,345 in (10,000 cached) / 678 out, $0.0123"."""
        cached = f" ({self.cached_tokens:,} cached)" if self.cached_tokens else ""
        return (f"{self.prompt_tokens:,} in{cached} / {self.completion_tokens:,} out, "
                f"${self.cost_usd:.4f}")


def from_response(response: Any, cost_usd: float) -> Usage:
    """The usage block of a litellm response; providers name cache reads differently and
    litellm maps them to `prompt_tokens_details.cached_tokens` (Anthropic's
    `cache_read_input_tokens` as well)."""
    usage = getattr(response, "usage", None)
    if usage is None:
        return Usage(cost_usd=cost_usd, calls=1)
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) or getattr(
        usage, "cache_read_input_tokens", 0)
    return Usage(
        prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        cached_tokens=int(cached or 0),
        cache_write_tokens=int(getattr(usage, "cache_creation_input_tokens", 0) or 0),
        completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        cost_usd=cost_usd,
        calls=1,
    )
