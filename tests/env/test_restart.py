"""A restart loses only the episodes that were running, and says so to their callers."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudaopt.env import EnvError
from tests.env.conftest import SERVE_ARGS, SWISH, Service


def test_a_restart_tells_callers_their_episode_was_lost(tmp_path: Path) -> None:
    first = Service(tmp_path, *SERVE_ARGS)
    try:
        client = first.client()
        episode_id = client.reset((SWISH / "model.py").read_text())["observation"]["episode_id"]
        client.step(episode_id, "write", {"path": "notes.txt", "content": "before the crash"})
    finally:
        first.kill()
    second = Service(tmp_path, *SERVE_ARGS)
    try:
        client = second.client()
        assert "1 episodes lost" in second.log.read_text()
        assert client.health()["episodes"]["lost_in_restart"] == 1
        for call in (lambda: client.step(episode_id, "read", {"path": "notes.txt"}),
                     lambda: client.state(episode_id)):
            with pytest.raises(EnvError) as lost:
                call()
            assert lost.value.status == 410 and lost.value.code == "episode_lost"
            assert "lost in a restart" in str(lost.value)
        with pytest.raises(EnvError) as unknown:
            client.state("neverstarted")
        assert unknown.value.status == 404
        fresh = client.reset((SWISH / "model.py").read_text())["observation"]["episode_id"]
        assert client.step(fresh, "read", {"path": "model.py"})["done"] is False
        workspace = tmp_path / "state" / "episodes" / episode_id / "run" / "workspace"
        assert (workspace / "notes.txt").read_text() == "before the crash"  # files kept
    finally:
        second.stop()
