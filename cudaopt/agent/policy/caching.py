"""Prompt-cache markers: Anthropic-style `cache_control` on a stable prefix, which litellm
passes to the providers that take them. Three breakpoints: the system prompt (tools and
skill before it), the task, and the request's last message, so the next step reads
everything up to there from the cache. The conversation itself is never changed."""

from __future__ import annotations

from typing import Any

MARK = {"type": "ephemeral"}


def mark(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A copy of `messages` with cache markers on the system prompt, the first user
    message and the last message (where their content is text)."""
    marked = [dict(m) for m in messages]
    targets = {len(marked) - 1}
    targets |= {next((i for i, m in enumerate(marked) if m.get("role") == role), -1)
                for role in ("system", "user")}
    for index in sorted(t for t in targets if t >= 0):
        marked[index] = _marked(marked[index])
    return marked


def _marked(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if isinstance(content, str) and content:
        return {**message, "content": [{"type": "text", "text": content, "cache_control": MARK}]}
    if isinstance(content, list) and content and isinstance(content[-1], dict):
        blocks = [dict(b) for b in content]
        blocks[-1]["cache_control"] = MARK
        return {**message, "content": blocks}
    return message

