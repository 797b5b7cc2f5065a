"""What never reaches the judge: requests without the token, malformed or oversized
bodies, unknown tools, paths that leave their folder. Each gets a 4xx and a reason."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from cudaopt.env import EnvClient, EnvError
from tests.env.conftest import Service, swish_item


def _raw(service: Service, path: str, body: bytes | None, token: str | None,
         method: str = "POST") -> tuple[int, dict]:
    request = urllib.request.Request(service.url + path, data=body, method=method)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_health_is_open_everything_else_needs_the_token(service: Service) -> None:
    status, health = _raw(service, "/health", None, None, method="GET")
    assert status == 200 and health["status"] == "healthy" and health["slots"] == ["cpu:0"]
    body = json.dumps({"items": [swish_item()]}).encode()
    for token in (None, "wrong-token-0123456789", service.token_file.read_text().strip()[:-1]):
        status, answer = _raw(service, "/verify", body, token)
        assert status == 401 and "token" in answer["error"]["message"]
    with pytest.raises(EnvError) as refused:
        EnvClient(service.url, token="x" * 40).reset("class Model: pass")
    assert refused.value.status == 401


@pytest.mark.parametrize("path,body,status,reason", [
    ("/verify", b"{not json", 400, "not valid JSON"),
    ("/verify", b"[]", 400, "must be a JSON object"),
    ("/verify", b'{"items": {}}', 400, "items: must be a JSON array"),
    ("/verify", b'{"items": []}', 400, "give 1 to"),
    ("/verify", b'{"items": [{"task": "x"}]}', 400, "missing field 'model_new'"),
    ("/verify", b'{"items": [{"task": "x", "model_new": "y", "kernels": {"../evil.cu": ""}}]}',
     400, "'../evil.cu'"),
    ("/verify", b'{"items": [{"task": "x", "model_new": "y", "task_name": "../t.py"}]}',
     400, "task_name"),
    ("/verify", b'{"items": [{"task": "x", "model_new": 3}]}', 400, "must be a JSON string"),
    ("/reset", b'{"task": "x", "extra": 1}', 400, "unknown field(s) ['extra']"),
    ("/reset", b'{"task": "x", "backend": "rust"}', 400, "backend"),
    ("/reset", b'{"task": "x", "backend": "triton"}', 400, "Triton kernels need a CUDA device"),
    ("/step", b'{"episode_id": "abc", "action": {"tool": "rm", "args": {}}}', 400,
     "unknown tool 'rm'"),
    ("/step", b'{"episode_id": "abc", "action": {"tool": "bash", "args": {"cmd": "ls"}}}',
     400, "missing ['command']"),
    ("/step", b'{"episode_id": "../x", "action": {}}', 400, "episode_id"),
    ("/step", b'{"episode_id": "nosuchepisode", "action": {}}', 404, "no episode"),
    ("/nowhere", b"{}", 404, "no such endpoint"),
])
def test_malformed_requests_get_a_reason_and_never_reach_the_judge(
        service: Service, path: str, body: bytes, status: int, reason: str) -> None:
    token = service.token_file.read_text().strip()
    candidates = service.root / "state" / "executor" / "candidates"
    before = sorted(candidates.iterdir()) if candidates.is_dir() else []
    got, answer = _raw(service, path, body, token)
    assert got == status and reason in answer["error"]["message"], answer
    after = sorted(candidates.iterdir()) if candidates.is_dir() else []
    assert after == before and _raw(service, "/health", None, None, "GET")[1][
        "verify"]["pending"] == 0


def test_oversized_requests_are_refused_before_they_are_parsed(service: Service) -> None:
    token = service.token_file.read_text().strip()
    big = "x" * (1 << 20 + 1)
    field = json.dumps({"items": [{"task": big, "model_new": "y"}]}).encode()
    status, answer = _raw(service, "/verify", field, token)
    assert status == 413 and "items[0].task" in answer["error"]["message"]
    status, answer = _raw(service, "/verify", b" " * (17 << 20), token)
    assert status == 413 and "the limit is" in answer["error"]["message"]
