"""The agent loop: ask the model, run its actions, watch the judged candidates, and decide
when to stop. Success is cudaopt's call: the best candidate is the one the loop judged
itself, and a model that stops short of the target is told so and goes on."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from cudaopt.agent import prompts, records
from cudaopt.agent.best import BestTracker
from cudaopt.agent.config import Limits, RunState
from cudaopt.agent.environment import actions as act
from cudaopt.agent.environment.workspace import Workspace
from cudaopt.agent.errors import ReplayExhausted
from cudaopt.agent.events import OnEvent, describe
from cudaopt.agent.policy.asking import Asker
from cudaopt.agent.policy.compaction import files_text
from cudaopt.agent.policy.context import Budget
from cudaopt.agent.policy.model import Model
from cudaopt.agent.trajectory import Trajectory
from cudaopt.judge import Verdict


class Agent:
    def __init__(
        self,
        model: Model,
        workspace: Workspace,
        tracker: BestTracker,
        trajectory: Trajectory,
        messages: list[dict[str, Any]],
        limits: Limits,
        progress: RunState,
        prompt_values: dict[str, str],
        on_event: OnEvent,
        checkpoint: Callable[[], None],
        budget: Budget | None = None,
    ) -> None:
        self.model, self.workspace, self.tracker = model, workspace, tracker
        self.trajectory, self.messages, self.limits = trajectory, messages, limits
        self.progress, self.values, self.emit = progress, prompt_values, on_event
        self.checkpoint = checkpoint
        self.tools = prompts.tool_schemas() if model.uses_tools else None
        self.claims: dict[str, Verdict] = {}  # content hash -> verdict a record claimed
        self.last_judged: Verdict | None = None  # the loop's latest judgement of the workspace
        self._started = time.monotonic()
        self.asker = Asker(model, budget or Budget(None, "unknown"), trajectory, on_event,
                           self._standing, progress.usage)

    @property
    def cost_usd(self) -> float:
        return self.progress.cost_usd + self.model.cost_usd

    @property
    def wall_s(self) -> float:
        return self.progress.wall_s + time.monotonic() - self._started

    def run(self) -> str:
        """Steps until a stop rule fires; returns the reason."""
        while True:
            reason = self._limit_reached()
            if reason:
                return reason
            self.progress.steps += 1
            self.emit(
                "step",
                {
                    "step": self.progress.steps,
                    "summary": self._summary(),
                    "cost_usd": self.cost_usd,
                    "elapsed_s": self.wall_s,
                },
            )
            try:
                message = self.asker.ask(self.messages, self.tools, self.progress.steps)
            except ReplayExhausted:
                self.progress.steps -= 1
                return "replay_exhausted"
            self.add(message)
            if message.get("content"):
                self.emit("message", {"role": "model", "text": message["content"]})
            actions = self._actions(message)
            if actions:
                self._act(actions)
                reason = None  # the model acted: the run goes on
            else:
                reason = self._on_stop()
            self.checkpoint()
            if reason:
                return reason

    def _standing(self) -> tuple[str, str]:
        """The run's standing and the workspace's files, for a compaction's summary."""
        last = (describe("the judge's latest verdict on model_new.py", None, self.last_judged)
                if self.last_judged else "")
        return f"{self._summary()} {last}".strip(), files_text(self.workspace.root)

    def add(self, message: dict[str, Any]) -> None:
        self.messages.append(message)
        self.trajectory.append(message, self.progress.steps)

    def nudge(self, name: str, **values: str) -> None:
        text = prompts.prompt(name, **{**self.values, **values})
        self.add({"role": "user", "content": text})
        self.trajectory.note(name, self.progress.steps)
        self.emit("message", {"role": "cudaopt", "text": text})

    def _limit_reached(self) -> str | None:
        if self.progress.steps >= self.limits.max_steps:
            return "max_steps"
        if self.cost_usd >= self.limits.max_cost_usd:
            return "max_cost"
        if self.wall_s >= self.limits.max_minutes * 60:
            return "max_minutes"
        return None

    def _actions(self, message: dict[str, Any]) -> list[act.Action]:
        if self.model.uses_tools:
            return act.from_tool_calls(message.get("tool_calls") or [])
        return act.from_text(message.get("content") or "")

    def _act(self, actions: list[act.Action]) -> None:
        observations = []
        for number, action in enumerate(actions, 1):
            if action.error:
                output, ok = f"error: {action.error}", False
            else:
                result = self.workspace.call(action.name, action.args)
                output, ok = result.output, result.ok
            self.emit(
                "tool",
                {
                    "name": action.name,
                    "summary": action.summary(),
                    "args": action.args,
                    "output": output,
                    "ok": ok,
                },
            )
            if action.call_id is not None:
                self.add({"role": "tool", "tool_call_id": action.call_id, "content": output})
            else:
                observations.append(act.observation(number, action, output))
        if observations:
            self.add({"role": "user", "content": "\n\n".join(observations)})
        self._scan_records()

    def _scan_records(self) -> None:
        """New records from the shell's judge commands: shown, and re-judged when one
        claims a new best."""
        seen = set(self.progress.seen_records)
        for number in records.list_records(self.tracker.record_dir):
            if number in seen:
                continue
            self.progress.seen_records.append(number)
            path = records.record_path(self.tracker.record_dir, number)
            claimed = records.read_verdict(path)
            if claimed is None:
                continue
            self.claims[records.content_hash(path)] = claimed
            trusted = self.tracker.is_trusted(path)
            self.emit(
                "candidate",
                {"index": number, "verdict": claimed, "path": path, "trusted": trusted},
            )
            if self.tracker.claims_better(claimed):
                if not trusted:
                    self.emit("judge", {"text": f"re-judging candidate {number}, a claimed best"})
                self._offer(number, self.tracker.judge(path))

    def _offer(self, number: int, verdict: Verdict) -> None:
        if self.tracker.offer(number, verdict):
            self.progress.gains += 1
            path = self.tracker.best_dir
            self.trajectory.note(
                "best", self.progress.steps, index=number, verdict=verdict.to_json()
            )
            self.emit("best", {"index": number, "verdict": verdict, "path": path})

    def _on_stop(self) -> str | None:
        """The model stopped acting: judge its workspace, then end or push it on."""
        self._judge_workspace()
        if not self.tracker.target_reached:
            last = (
                describe("The judge's verdict on your model_new.py", None, self.last_judged)
                if self.last_judged
                else ""
            )
            self.nudge("nudge_target", status=f"{self._summary()} {last}".strip())
            return None
        if self.progress.gains > self.progress.gains_at_last_stop:
            self.progress.gains_at_last_stop = self.progress.gains
            self.nudge("nudge_improve", status=self._summary())
            return None
        return "done"

    def _judge_workspace(self) -> None:
        root = self.workspace.root
        key = records.content_hash(root)
        known = self.tracker.trusted.get(key) or self.claims.get(key)
        if known is not None and (
            key in self.tracker.trusted
            or not known.clean
            or (known.candidate is not None and not self.tracker.better(known))
        ):
            self.last_judged = known
            return  # judged already, and not a contender
        self.emit("judge", {"text": "judging the workspace's model_new.py"})
        verdict = self.last_judged = self.tracker.judge(root)
        path = records.record(self.tracker.record_dir, self.tracker.staged, verdict)
        number = int(path.name)
        self.progress.seen_records.append(number)
        self.emit("candidate", {"index": number, "verdict": verdict, "path": path, "trusted": True})
        self._offer(number, verdict)

    def _summary(self) -> str:
        best = self.tracker.best
        if best is None:
            return "no candidate verified and timed by cudaopt yet."
        speed = best.speedup_vs_compile
        vs = f"{speed:.2f}x vs torch.compile" if speed is not None else "not timed"
        where = f"candidate {self.tracker.best_index}" if self.tracker.best_index else "best"
        return f"best so far is {where}: correct, {vs} (reward {best.reward:g})."
