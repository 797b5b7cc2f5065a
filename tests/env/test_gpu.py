"""The reward service on a GPU: `/verify` on the shipped CUDA examples (both kernel
layouts) and one scripted episode, with the judge's default settings but a short budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import EXAMPLES
from tests.env.conftest import Service

CUDA = EXAMPLES / "fused_swish_cuda"
INLINE = EXAMPLES / "softplus_inline"


def _item(folder: Path) -> dict:
    kernels = folder / "kernels"
    return {"task": (folder / "model.py").read_text(), "task_name": f"{folder.name}.py",
            "model_new": (folder / "model_new.py").read_text(),
            "kernels": {p.name: p.read_text() for p in sorted(kernels.iterdir())}
            if kernels.is_dir() else {}}


@pytest.mark.gpu
def test_the_service_judges_cuda_candidates_and_runs_an_episode(tmp_path: Path) -> None:
    service = Service(tmp_path, "--device", "cuda", "--sandbox", "none", "--trials", "3",
                      "--time-budget", "3", "--max-steps", "8")
    try:
        client = service.client()
        assert all(s.startswith("cuda:") for s in client.health()["slots"])
        for result in client.verify([_item(CUDA), _item(INLINE)]):
            assert result["infra_error"] is None, result["infra_error"]
            assert result["correct"] and result["reward"] >= 1, result["verdict"]["status"]
        item = _item(CUDA)
        episode = client.reset(item["task"], "fused_swish.py")["observation"]["episode_id"]
        for name, text in item["kernels"].items():
            client.step(episode, "write", {"path": f"kernels/{name}", "content": text})
        client.step(episode, "write", {"path": "model_new.py", "content": item["model_new"]})
        reply = client.step(episode, message="Done.")
        while not reply["done"]:
            reply = client.step(episode, message="Done.")
        final = reply["observation"]["final_verdict"]
        assert final["correct"] and reply["reward"] == final["reward"] >= 1
        assert final["device"] == "cuda"
    finally:
        service.stop()
