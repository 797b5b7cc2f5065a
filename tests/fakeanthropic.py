"""The scripted server of `tests.fakeopenai`, speaking Anthropic's messages API instead
(`POST /v1/messages`), with a prompt cache: a request whose `cache_control`-marked prefix
was seen before is billed as read from the cache, as Anthropic reports it in `usage`.
cudaopt reaches it through litellm as `anthropic/<model>` with `api_base` on 127.0.0.1."""

from __future__ import annotations

import json
import math
from typing import Any

from tests.fakeopenai import FakeOpenAI, Reply


class FakeAnthropic(FakeOpenAI):
    def __init__(self, script: list[Any]) -> None:
        super().__init__(script)
        self._prefixes: set[str] = set()

    def post(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if not path.rstrip("/").endswith("/messages"):
            return 404, {"type": "error", "error": {"type": "not_found_error",
                                                    "message": f"no route {path}"}}
        return self.answer(body)

    @staticmethod
    def count(body: dict[str, Any]) -> int:
        parts = [body.get(key) or [] for key in ("system", "messages", "tools")]
        return math.ceil(sum(len(json.dumps(part)) for part in parts) / 4)

    @staticmethod
    def in_session(body: dict[str, Any]) -> bool:
        return bool(body.get("system"))

    def _completion(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        self._calls += 1
        content: list[dict[str, Any]] = [{"type": "text", "text": reply.content}] \
            if reply.content else []
        content += [{"type": "tool_use", "id": f"toolu_{self._calls}_{i}", "name": name,
                     "input": args} for i, (name, args) in enumerate(reply.tool_calls)]
        read, written = self._cache(body)
        return {"id": f"msg_{self._calls}", "type": "message", "role": "assistant",
                "model": body.get("model", "fake"), "content": content,
                "stop_reason": "tool_use" if reply.tool_calls else "end_turn",
                "usage": {"input_tokens": max(0, self.count(body) - read - written),
                          "output_tokens": 5, "cache_read_input_tokens": read,
                          "cache_creation_input_tokens": written}}

    def _cache(self, body: dict[str, Any]) -> tuple[int, int]:
        """(tokens read from the cache, tokens written to it): the longest marked prefix
        (tools, system, messages in order) seen before is read; the longest marked one is
        written."""
        parts = [*(body.get("tools") or []), *_blocks(body.get("system")),
                 *[b for m in body.get("messages", []) for b in _blocks(m.get("content"))]]
        marked = [i for i, part in enumerate(parts) if "cache_control" in part]
        if not marked:
            return 0, 0
        prefixes = [json.dumps(parts[: i + 1]) for i in marked]
        read = max((len(p) for p in prefixes if p in self._prefixes), default=0)
        self._prefixes.update(prefixes)
        written = len(prefixes[-1]) - read
        return math.ceil(read / 4), math.ceil(written / 4)


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return [{"type": "text", "text": content}] if content else []
