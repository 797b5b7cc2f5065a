"""A real HTTP server on 127.0.0.1 that speaks OpenAI chat completions, tool calls included,
playing a scripted session. Tests drive cudaopt through litellm against it
(`--model openai/<name> --api-base <server.url>`), so the whole client path is exercised.

A script is a list of turns. A turn is a `Reply` or a function of the conversation so far
(the request's messages) returning one, so a test can assert what the model was shown.
Requests without a system message are answered "ok" without consuming the script: that is
cudaopt's preflight call. When the script runs out, the model says it is done.

With `context_tokens` the server has a context window, as vLLM does: it counts a request as
its messages' and tools' JSON over 4 characters a token, refuses one over the window with
HTTP 400 `context_length_exceeded` (stating the window, unless `state_window` is False),
and with `model_card` reports the window as `max_model_len` in `GET /v1/models`.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    content: str = ""
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def call(name: str, **arguments: Any) -> Reply:
    """A turn that makes one tool call."""
    return Reply(tool_calls=[(name, arguments)])


def say(text: str) -> Reply:
    """A turn with text only: the model thinks it is done."""
    return Reply(content=text)


Turn = Reply | Callable[[list[dict[str, Any]]], Reply]


class FakeOpenAI:
    """Context manager; `url` is the `--api-base`; `requests` holds every request body."""

    def __init__(self, script: list[Turn], tools_supported: bool = True,
                 context_tokens: int | None = None, model_card: bool = False,
                 state_window: bool = True) -> None:
        self.script = list(script)
        self.tools_supported = tools_supported
        self.context_tokens, self.model_card = context_tokens, model_card
        self.state_window = state_window
        self.requests: list[dict[str, Any]] = []
        self.tokens: list[int] = []  # the server's count of each request, refused ones too
        self.refused = 0
        self.errors: list[str] = []  # assertion failures inside turn functions
        self._lock = threading.Lock()
        self._calls = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def remaining(self) -> int:
        return len(self.script)

    @staticmethod
    def count(body: dict[str, Any]) -> int:
        chars = len(json.dumps(body.get("messages", []))) + len(json.dumps(body.get("tools", [])))
        return math.ceil(chars / 4)

    def models(self) -> dict[str, Any]:
        card: dict[str, Any] = {"id": "fake-kernel-model", "object": "model"}
        if self.context_tokens:
            card["max_model_len"] = self.context_tokens
        return {"object": "list", "data": [card]}

    def post(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if not path.rstrip("/").endswith("/chat/completions"):
            return 404, {"error": {"message": f"no route {path}"}}
        return self.answer(body)

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.requests.append(body)
            tokens = self.count(body)
            self.tokens.append(tokens)
            if self.context_tokens and tokens > self.context_tokens:
                self.refused += 1
                stated = (f"This model's maximum context length is {self.context_tokens} "
                          "tokens. However, your" if self.state_window else "Prompt is too "
                          "long: your")
                return 400, {"error": {"message": f"{stated} messages resulted in {tokens} "
                                       "tokens.", "type": "invalid_request_error",
                                       "param": "messages", "code": "context_length_exceeded"}}
            if body.get("tools") and not self.tools_supported:
                return 400, {
                    "error": {
                        "message": '"auto" tool choice requires '
                        "--enable-auto-tool-choice and --tool-call-parser",
                        "type": "BadRequestError",
                        "code": 400,
                    }
                }
            messages = body.get("messages", [])
            if not self.in_session(body):
                return 200, self._completion(body, Reply(content="ok"))
            turn = self.script.pop(0) if self.script else say("I am done.")
            if callable(turn):
                try:
                    turn = turn(messages)
                except AssertionError as exc:
                    self.errors.append(str(exc))
                    turn = say(f"script assertion failed: {exc}")
            return 200, self._completion(body, turn)

    @staticmethod
    def in_session(body: dict[str, Any]) -> bool:
        """The loop's requests carry the system prompt; preflight's ping does not."""
        return any(m.get("role") == "system" for m in body.get("messages", []))

    def _completion(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        self._calls += 1
        message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{self._calls}_{i}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
                for i, (name, args) in enumerate(reply.tool_calls)
            ]
        return {
            "id": f"chatcmpl-{self._calls}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "fake"),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if reply.tool_calls else "stop",
                }
            ],
            "usage": {"prompt_tokens": self.count(body), "completion_tokens": 5,
                      "total_tokens": self.count(body) + 5},
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                found = fake.model_card and self.path.rstrip("/").endswith("/models")
                self._send(200 if found else 404,
                           fake.models() if found else {"error": {"message": "no route"}})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                self._send(*fake.post(self.path, body))

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler
