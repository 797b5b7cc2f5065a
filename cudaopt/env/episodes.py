"""Episodes by id: started within capacity, spread over the slots, reaped when idle or
finished, and remembered on disk so that a restarted service can tell a caller that its
episode was lost in the restart instead of "unknown id"."""

from __future__ import annotations

import json
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from cudaopt.agent.environment.layout import BackendError, check_backend
from cudaopt.env.episode import RECORD, Episode
from cudaopt.env.errors import ServiceError, bad, busy
from cudaopt.env.options import ServiceOptions
from cudaopt.env.validate import Action
from cudaopt.executor import SlotSpec
from cudaopt.executor.devlock import device_lock
from cudaopt.judge import gpu_identity
from cudaopt.sandbox import Sandbox

LOST = ("episode {id} was lost in a restart of the service (it was running when the "
        "service stopped); start a new one with /reset")


class EpisodeManager:
    def __init__(self, options: ServiceOptions, slots: list[SlotSpec], sandbox: Sandbox):
        self.options, self.slots, self.sandbox = options, slots, sandbox
        self.folder = options.episodes_dir
        self.folder.mkdir(parents=True, exist_ok=True)
        self.lost = mark_lost(self.folder)
        self._live: dict[str, Episode] = {}
        # the slot processes take the same locks: episodes and /verify time in turn
        self._device_locks = {s.name: device_lock(options.executor_dir, s, None if s.gpu is None
                                                  else gpu_identity(s.gpu)) for s in slots}
        self._lock = threading.Lock()
        self._closed = threading.Event()
        threading.Thread(target=self._reap, daemon=True, name="episode-reaper").start()

    def reset(self, task_name: str, task: str, episode_id: str | None,
              backend: str = "cuda") -> dict[str, Any]:
        if self.slots:
            try:
                check_backend(backend, self.slots[0].device)
            except BackendError as exc:
                raise bad(f"backend: {exc}") from None
        with self._lock:
            running = [e for e in self._live.values() if not e.done]
            if len(running) >= self.options.max_episodes:
                raise busy(f"{len(running)} episodes running, the most this service runs",
                           min(60.0, self.options.idle_s))
            if not self.slots:
                raise ServiceError(503, "this service judges /verify on a Ray cluster and has "
                                   "no device of its own for episodes", code="no_episodes")
            episode_id = episode_id or uuid.uuid4().hex[:16]
            folder = self.folder / episode_id
            if folder.exists():
                raise ServiceError(409, f"episode {episode_id} exists already", code="conflict")
            folder.mkdir()
            slot = min(self.slots, key=lambda s: sum(e.slot == s for e in running))
            episode = Episode(episode_id, folder, task_name, task, self.options, slot,
                              self._device_locks[slot.name], self.sandbox, backend)
            self._live[episode_id] = episode
        return episode.start()

    def step(self, episode_id: str, action: Action) -> dict[str, Any]:
        episode = self._live.get(episode_id)
        if episode is None:
            return self._from_disk(episode_id)["final"]
        return episode.step(action)

    def state(self, episode_id: str) -> dict[str, Any]:
        episode = self._live.get(episode_id)
        if episode is not None:
            return episode.state()
        record = self._from_disk(episode_id)
        final = record["final"]
        return {"episode_id": episode_id, "step_count": final["metadata"]["steps"],
                "status": "done", "task_name": record["task_name"], "done": True,
                "reward": final["reward"], "run_dir": final["metadata"]["run_dir"]}

    def counts(self) -> dict[str, int]:
        live = list(self._live.values())
        return {"running": sum(not e.done for e in live), "finished": sum(e.done for e in live),
                "lost_in_restart": self.lost, "max": self.options.max_episodes}

    def close(self) -> None:
        """Episodes still running stay "running" on disk: lost, as the next start will say."""
        self._closed.set()

    def _from_disk(self, episode_id: str) -> dict[str, Any]:
        try:
            record = json.loads((self.folder / episode_id / RECORD).read_text())
        except (OSError, ValueError):
            raise ServiceError(404, f"no episode {episode_id}", code="not_found") from None
        if record.get("status") == "lost" or record.get("final") is None:
            raise ServiceError(410, LOST.format(id=episode_id), code="episode_lost")
        return record

    def _reap(self) -> None:
        """Forget finished episodes after a while (their files stay, and /state still
        answers from them); idle ones end themselves (see `RemotePolicy`)."""
        while not self._closed.wait(5.0):
            now = time.monotonic()
            with self._lock:
                for episode_id, episode in list(self._live.items()):
                    if episode.ended_at and now - episode.ended_at > self.options.keep_done_s:
                        del self._live[episode_id]


def mark_lost(folder: Path) -> int:
    """Episodes a previous service left running are lost; say so on disk. Returns how many."""
    lost = 0
    for record_path in folder.glob(f"*/{RECORD}"):
        try:
            record = json.loads(record_path.read_text())
        except (OSError, ValueError):
            continue
        if record.get("status") == "running":
            record["status"] = "lost"
            record_path.write_text(json.dumps(record) + "\n")
            lost += 1
    return lost
