"""The context budget: how many tokens the model takes in one request, where that figure
came from, and how a request is measured against it.

A window comes from (the smallest wins): litellm's model information, the endpoint's own
model card (vLLM's `/v1/models` reports `max_model_len`), the `context_tokens` setting, or
the number a provider states when it refuses an over-long request. Without any of them the
budget is unknown and nothing is compacted until a provider refuses.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: Characters per token of the estimate used where no tokenizer knows the model. Tokenizers
#: of current models give 3.5-4.5 characters per token on code and English; 3 over-counts,
#: so an estimate under the budget is under it for the real tokenizer too.
CHARS_PER_TOKEN = 3
#: Room kept for the model's answer: a kernel file written in one reply.
ANSWER_TOKENS = 8192

#: Where a window comes from after a refusal (kept for a resumed run).
STATED = "stated by the provider when it refused a request"
HALVED = "half of a refused request (no window stated)"
LEARNED = (STATED, HALVED)

Counter = Callable[[list[dict[str, Any]], list[dict[str, Any]] | None], int]

_STATED = re.compile(r"maximum context length is (\d+)", re.I)


def estimate_tokens(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> int:
    """A conservative token count without a tokenizer: the request's JSON over 3."""
    chars = len(json.dumps(messages)) + (len(json.dumps(tools)) if tools else 0)
    return -(-chars // CHARS_PER_TOKEN)


@dataclass
class Budget:
    """A model's context window in tokens (None: unknown) and where the figure came from."""

    window_tokens: int | None
    source: str

    @property
    def known(self) -> bool:
        return self.window_tokens is not None

    @property
    def prompt_tokens(self) -> int | None:
        """What a request may take: the window less the room kept for the answer."""
        if self.window_tokens is None:
            return None
        return self.window_tokens - min(ANSWER_TOKENS, self.window_tokens // 4)

    def describe(self) -> str:
        if self.window_tokens is None:
            return "context window unknown (set context_tokens to compact before a refusal)"
        return f"context window {self.window_tokens:,} tokens ({self.source})"

    def to_json(self) -> dict[str, Any]:
        return {"window_tokens": self.window_tokens, "source": self.source,
                "prompt_tokens": self.prompt_tokens}


def resolve(found: list[tuple[int | None, str]], setting: int | None) -> Budget:
    """The smallest window among what the model's sources report and the setting."""
    known = [(tokens, source) for tokens, source in found if tokens]
    if setting:
        known.append((setting, "setting context_tokens"))
    if not known:
        return Budget(None, "unknown")
    tokens, source = min(known, key=lambda pair: pair[0])
    return Budget(tokens, source)


def for_model(model: Any, setting: int | None, before: dict[str, Any] | None) -> Budget:
    """A model's budget from the windows it reports (`context_windows()`, where it has
    one), the setting, and `before` (a resumed run's budget: what a refusal taught stays)."""
    windows = list(getattr(model, "context_windows", list)())
    if before and before.get("source") in LEARNED:
        windows.append((before.get("window_tokens"), before["source"]))
    return resolve(windows, setting)


def stated_window(text: str) -> int | None:
    """The window a refusal states ("This model's maximum context length is 4096 tokens")."""
    found = _STATED.search(text)
    return int(found[1]) if found else None
