"""The model protocol: anything that answers a conversation with one assistant message.

Policies: litellm (any provider, or an OpenAI-compatible `--api-base`) and `replay:PATH`
(a recorded trajectory's actions, re-executed for real). Messages are OpenAI-shaped dicts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

REPLAY_PREFIX = "replay:"


class Model(Protocol):
    name: str
    uses_tools: bool  # function calling; False means fenced action blocks in text
    cost_usd: float  # spent so far in this process

    def preflight(self) -> None:
        """Fail fast, before step 1, when the model cannot answer (raises PreflightError)."""

    def query(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> dict[str, Any]:
        """The next assistant message: {"role", "content", "tool_calls"?}."""


def make_model(
    spec: str,
    api_base: str | None = None,
    tools: bool | None = None,
    history: list[dict[str, Any]] | None = None,
) -> Model:
    """A model from its `--model` string; `history` (a resumed run) positions a replay."""
    if spec.startswith(REPLAY_PREFIX):
        from cudaopt.agent.policy.replay import ReplayModel

        done = sum(1 for m in history or [] if m.get("role") == "assistant")
        return ReplayModel(Path(spec[len(REPLAY_PREFIX) :]).expanduser(), skip=done)
    from cudaopt.agent.policy.llm import LitellmModel

    return LitellmModel(spec, api_base=api_base, tools=tools)
