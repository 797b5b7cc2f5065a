"""One model call per step, on what fits the model's context budget: the conversation is
compacted first when it would not (`cudaopt.agent.policy.compaction`), a refusal as too long is
compacted harder and tried once more, and what each call was billed is recorded."""

from __future__ import annotations

from typing import Any

from cudaopt.agent import prompts
from cudaopt.agent.errors import ContextTooLong, ModelError
from cudaopt.agent.events import OnEvent
from cudaopt.agent.policy.compaction import Compaction, Compactor, State
from cudaopt.agent.policy.context import Budget, estimate_tokens
from cudaopt.agent.policy.model import Model
from cudaopt.agent.policy.usage import Usage
from cudaopt.agent.trajectory import Trajectory

Messages = list[dict[str, Any]]


class Asker:
    def __init__(self, model: Model, budget: Budget, trajectory: Trajectory, emit: OnEvent,
                 standing: State, usage_before: dict[str, Any]) -> None:
        self.model, self.trajectory, self.emit = model, trajectory, emit
        self.count = getattr(model, "count_tokens", estimate_tokens)
        self.context = Compactor(budget, self.count, standing)
        self.compactions = 0  # in this session
        self._usage_before = Usage.from_json(usage_before)  # earlier sessions'

    @property
    def usage(self) -> Usage:
        """Billed by this run, all sessions: every call, the preflight's included."""
        total = Usage.from_json(self._usage_before.to_json())
        total.add(getattr(self.model, "usage", Usage()))
        return total

    def ask(self, messages: Messages, tools: Messages | None, step: int) -> dict[str, Any]:
        """The model's next message; only then stops the run (ModelError) when even the
        hardest compaction is refused, saying what did not fit."""
        sent, done = self.context.view(messages, tools, step)
        self._compacted(done)
        try:
            message = self.model.query(sent, tools)
        except ContextTooLong as exc:
            sent, done = self.context.harder(messages, tools, step, exc.window_tokens)
            self._compacted(done)
            try:
                message = self.model.query(sent, tools)
            except ContextTooLong as again:
                raise ModelError(self._too_long(messages, sent, tools, again)) from again
            self.context.relax()
        self._billed(step, sent, tools)
        return message

    def _compacted(self, done: Compaction | None) -> None:
        if done is None:
            return
        self.compactions += 1
        self.trajectory.note("compacted", done.before_step, **done.to_json())
        self.emit("compacted", done.to_json())

    def _billed(self, step: int, sent: Messages, tools: Messages | None) -> None:
        last = getattr(self.model, "last_usage", None)
        if last is None:
            return
        request = self.count(sent, tools)
        self.trajectory.note("usage", step, request_tokens=request, **last.to_json())
        self.emit("usage", {"step": step, "usage": last, "total": self.usage,
                            "request_tokens": request})

    def _too_long(self, messages: Messages, sent: Messages, tools: Messages | None,
                  exc: ContextTooLong) -> str:
        return prompts.prompt(
            "too_long", model=self.model.name, request=f"{self.count(sent, tools):,}",
            fixed=f"{self.count(messages[:2], tools):,}", budget=self.context.budget.describe(),
            detail=str(exc))
