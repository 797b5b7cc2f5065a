"""One episode: `optimize`'s run, laid out and judged exactly as `optimize` does it, with
the model's turns coming from `/step`. Its run directory is an `optimize` run directory
(trajectory.jsonl, meta.json, candidates/, best/, final_verdict.json), so `replay:` and
`bench --candidates` read it like any other run."""

from __future__ import annotations

import json
import os
import threading
import time
import traceback
from dataclasses import replace
from pathlib import Path
from typing import Any

from cudaopt.agent import prompts
from cudaopt.agent.config import Limits, RunConfig
from cudaopt.agent.run import RunResult, start_run
from cudaopt.agent.trajectory import Trajectory
from cudaopt.env.errors import ServiceError
from cudaopt.env.options import MiB, ServiceOptions
from cudaopt.env.policy import RemotePolicy, Turn
from cudaopt.env.validate import Action
from cudaopt.executor import SlotSpec
from cudaopt.judge import DeviceLock
from cudaopt.sandbox import Sandbox

RECORD = "episode.json"  # status on disk: what a restarted service knows of the episode


class Episode:
    def __init__(self, episode_id: str, folder: Path, task_name: str, task: str,
                 options: ServiceOptions, slot: SlotSpec, lock: DeviceLock,
                 sandbox: Sandbox, backend: str = "cuda"):
        self.id, self.folder, self.options, self.slot = episode_id, folder, options, slot
        self.task_name, self.task, self.backend = task_name, task, backend
        self.run_dir = folder / "run"
        self.sandbox, self.lock = sandbox, lock
        self.policy = RemotePolicy(options.idle_s, self._over_limit)
        self.steps = 0
        self.best_reward: float | None = None
        self.status = "running"
        self.ended_at: float | None = None
        self.final: dict[str, Any] | None = None  # the last /step answer, once done
        self.compactions: list[dict[str, Any]] = []  # what was compacted, before which step
        self._thread = threading.Thread(target=self._run, daemon=True, name=f"episode-{self.id}")

    def start(self) -> dict[str, Any]:
        """Lay out the workspace and answer with the first observation (OpenEnv's reset)."""
        (self.folder / "task").mkdir(parents=True)
        (self.folder / "task" / self.task_name).write_text(self.task)
        self._save()
        self._thread.start()
        turn = self.policy.first_turn(timeout_s=600)
        if turn.end:
            return self.final or {}
        workspace = self.run_dir / "workspace"
        observation = {"episode_id": self.id, "task_name": self.task_name, "task": self.task,
                       "backend": self.backend,
                       "skill": (workspace / "skills" / "SKILL.md").read_text(),
                       "tools": prompts.tool_schemas(), "messages": turn.messages}
        return {"observation": observation, "reward": None, "done": False,
                "metadata": {"episode_id": self.id, "slot": self.slot.name}}

    def step(self, action: Action) -> dict[str, Any]:
        if self.final is not None:
            return self.final
        if not self.policy.busy.acquire(blocking=False):
            raise ServiceError(409, f"episode {self.id} is already running a step; send the "
                               "next action once it answers", code="conflict")
        try:
            if self.final is not None:
                return self.final
            self.steps += 1
            turn = self.policy.act(action, timeout_s=self.options.episode_minutes * 60 + 900)
            return (self.final or {}) if turn.end else self._answer(turn)  # final set before end
        finally:
            self.policy.busy.release()

    def state(self) -> dict[str, Any]:
        """OpenEnv's State: episode id and step count, plus where the episode stands."""
        return {"episode_id": self.id, "step_count": self.steps, "status": self.status,
                "task_name": self.task_name, "slot": self.slot.name, "done": self.done,
                "reward": (self.final or {}).get("reward", self.best_reward),
                "run_dir": str(self.run_dir)}

    @property
    def done(self) -> bool:
        return self.final is not None

    def stop(self, reason: str) -> None:
        self.policy.stop(reason)

    def _answer(self, turn: Turn) -> dict[str, Any]:
        text = "\n\n".join(str(m.get("content") or "") for m in turn.messages)
        observation: dict[str, Any] = {"messages": turn.messages, "text": text}
        if turn.replaces:  # compacted to fit the context: the whole conversation from now on
            observation.update(replaces_history=True, compaction=self.compactions[-1])
        return {"observation": observation,
                "reward": self.best_reward if self.best_reward is not None else -1.0,
                "done": False, "metadata": {"episode_id": self.id, "step": self.steps}}

    def _run(self) -> None:
        result: RunResult | None = None
        error = None
        try:
            result = start_run(self.folder / "task" / self.task_name, self._config(),
                               self._on_event, model=self.policy)
        except Exception as exc:  # noqa: BLE001 - the service's failure, reported as such
            error = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=4)}"
        self.final = self._final(result, error)
        self.status, self.ended_at = "done", time.monotonic()
        self._save()
        self.policy.ended()

    def _config(self) -> RunConfig:
        judge = replace(self.options.judge, device=self.slot.device)
        limits = Limits(max_steps=self.options.max_steps, max_cost_usd=float("inf"),
                        max_minutes=self.options.episode_minutes)
        return RunConfig(model=f"env:{self.id}", device=self.slot.device,
                         backend=self.backend, tools=True,
                         limits=limits, judge=judge, bash_timeout_s=self.options.bash_timeout_s,
                         context_tokens=self.options.context_tokens,
                         run_dir=self.run_dir, sandbox=self.sandbox, gpu=self.slot.gpu,
                         judge_lock=self.lock)

    def _on_event(self, kind: str, data: dict[str, Any]) -> None:
        if kind == "best":
            self.best_reward = data["verdict"].reward
        elif kind == "compacted":
            self.compactions.append(data)
            self._save()

    def _final(self, result: RunResult | None, error: str | None) -> dict[str, Any]:
        """The last answer: the milestone reward of the best candidate, re-checked with fresh
        seeds; no reward at all (and `infra_error`) when the service failed the episode."""
        final = result.final.to_json() if result and result.final else None
        reason = result.reason if result else "crashed"
        reward = None if error else (final["reward"] if final else -1.0)
        messages = _unseen(self.run_dir)
        return {"observation": {"messages": messages, "final_verdict": final,
                                "text": "\n\n".join(str(m.get("content") or "")
                                                    for m in messages)},
                "reward": reward, "done": True,
                "metadata": {"episode_id": self.id, "reason": reason, "infra_error": error,
                             "steps": self.steps, "run_dir": str(self.run_dir),
                             "compactions": self.compactions,
                             "stop_detail": result.meta.extra.get("error") if result else None}}

    def _over_limit(self) -> str | None:
        used = _size_bytes(self.run_dir)
        if used > self.options.episode_disk_mb * MiB:
            return (f"the episode's files take {used // MiB} MiB, over its limit of "
                    f"{self.options.episode_disk_mb} MiB")
        return None

    def _save(self) -> None:
        record = {"episode_id": self.id, "task_name": self.task_name, "status": self.status,
                  "slot": self.slot.name, "final": self.final,
                  "compactions": self.compactions}
        tmp = self.folder / (RECORD + ".tmp")
        tmp.write_text(json.dumps(record, default=str) + "\n")
        tmp.replace(self.folder / RECORD)


def _unseen(run_dir: Path) -> list[dict[str, Any]]:
    """The messages after the policy's last action (its results, a last nudge), from the
    run's trajectory, which holds them whole whatever was compacted."""
    messages = Trajectory(run_dir / "trajectory.jsonl").messages()
    last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    return messages[last + 1:] if last >= 0 else []


def _size_bytes(folder: Path) -> int:
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                continue
    return total
