"""The policy behind `/step`: a `Model` for the agent loop whose answers come from HTTP.

The loop runs unchanged in its own thread (stopping rules, re-judging claimed bests, the
final re-check); each time it asks the model for the next message, this hands the caller
what happened since the last turn and waits for the caller's next action.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cudaopt.agent.errors import ModelError
from cudaopt.env.validate import Action


class EpisodeStopped(ModelError):
    """The episode ends without the policy's say: idle too long, over its disk limit, or
    closed by the service. The loop stops as it does on a model error (state saved, best
    re-checked)."""


@dataclass
class Turn:
    """What the policy gets back: the messages since its last action; `end` once the
    episode is over (then the loop has returned and the final verdict is in)."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    end: bool = False
    replaces: bool = False  # `messages` is the whole conversation: compacted, it replaces
    # what the caller holds (the loop sent a shorter view to fit the context budget)


class RemotePolicy:
    name = "env"
    uses_tools = True
    cost_usd = 0.0

    def __init__(self, idle_s: float, over_limit: Callable[[], str | None]):
        self.idle_s = idle_s
        self.over_limit = over_limit  # a reason to stop, checked before each wait
        self._actions: queue.Queue[Action | str] = queue.Queue(maxsize=1)
        self._turns: queue.Queue[Turn] = queue.Queue()
        self._given: list[dict[str, Any]] = []  # the conversation as the caller holds it
        self._calls = 0
        self.busy = threading.Lock()  # one step at a time per episode

    def preflight(self) -> None:
        """Nothing to reach: the caller is the model."""

    def query(self, messages: list[dict[str, Any]],
              tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        known = len(self._given)
        if messages[:known] == self._given:
            self._turns.put(Turn(messages[known:]))
        else:  # compacted: the caller's history no longer matches what is sent
            self._turns.put(Turn(list(messages), replaces=True))
        reason = self.over_limit()
        if reason:
            raise EpisodeStopped(reason)
        try:
            action = self._actions.get(timeout=self.idle_s)
        except queue.Empty:
            raise EpisodeStopped(f"no action for {self.idle_s:.0f} s: the episode was "
                                 "reaped") from None
        if isinstance(action, str):
            raise EpisodeStopped(action)
        answer = self._message(action)
        self._given = [*messages, answer]  # the answer is the caller's own
        return answer

    def _message(self, action: Action) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": action.message or None}
        if action.tool is not None:
            self._calls += 1
            message["tool_calls"] = [{
                "id": f"call_{self._calls}", "type": "function",
                "function": {"name": action.tool, "arguments": json.dumps(action.args)}}]
        return message

    # the service's side
    def first_turn(self, timeout_s: float) -> Turn:
        return self._turns.get(timeout=timeout_s)

    def act(self, action: Action, timeout_s: float) -> Turn:
        """Hand the loop one action; wait for what it leads to (or the episode's end)."""
        self._actions.put(action, timeout=timeout_s)
        return self._turns.get(timeout=timeout_s)

    def stop(self, reason: str) -> None:
        try:
            self._actions.put_nowait(reason)
        except queue.Full:
            pass

    def ended(self) -> None:
        """Called once the loop and its final check are over."""
        self._turns.put(Turn(end=True))
