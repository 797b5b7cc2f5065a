"""The context budget's sources and the token counter, offline: no tokenizer is fetched
from a hub, no price list from the network, for models litellm knows and ones it does not."""

from __future__ import annotations

import json
import subprocess
import sys

from typer.testing import CliRunner

from cudaopt.agent.policy.context import Budget, estimate_tokens, resolve, stated_window
from cudaopt.cli import app
from tests.conftest import ROOT

#: Counts tokens with every connection attempt refused and recorded: litellm would reach
#: for the hub for a Llama 3 tokenizer, for the network for its price list.
NO_NETWORK = """
import json, socket, sys
tried = []
def refuse(self, address, *args):
    tried.append(str(address))
    raise OSError("no network in this test")
socket.socket.connect = refuse
socket.getaddrinfo = lambda host, *a, **k: refuse(None, host)
socket.create_connection = lambda address, *a, **k: refuse(None, address)
from cudaopt.agent.policy import llm_info
messages = [{"role": "user", "content": "write a fused softmax kernel " * 50}]
counts = {name: llm_info.count_tokens(name, messages, None) for name in sys.argv[1:]}
print(json.dumps({"counts": counts, "tried": tried}))
"""
MODELS = ["anthropic/claude-sonnet-4-5", "gpt-4o", "anyscale/meta-llama/Meta-Llama-3-8B-Instruct",
          "hosted_vllm/my-policy", "openai/fake-kernel-model"]


def test_tokens_are_counted_offline_without_fetching_a_tokenizer() -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", NO_NETWORK, *MODELS], capture_output=True,
                          text=True, timeout=120, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["tried"] == [], found["tried"]
    messages = [{"role": "user", "content": "write a fused softmax kernel " * 50}]
    estimate = estimate_tokens(messages, None)
    counts = found["counts"]
    assert 0 < counts["gpt-4o"] < estimate  # litellm's tokenizer: fewer than the estimate
    assert counts["anthropic/claude-sonnet-4-5"] > 0
    # a Llama 3 tokenizer lives on a hub, unknown models have none: the estimate
    assert counts["anyscale/meta-llama/Meta-Llama-3-8B-Instruct"] == estimate
    assert counts["hosted_vllm/my-policy"] == counts["openai/fake-kernel-model"] == estimate


def test_the_smallest_known_window_wins_and_the_setting_caps_it() -> None:
    found = [(200_000, "litellm's model information"), (None, "the endpoint's model card")]
    assert resolve(found, None) == Budget(200_000, "litellm's model information")
    assert resolve(found, 32_768) == Budget(32_768, "setting context_tokens")
    assert resolve([(8192, "the endpoint's model card")], 32_768).window_tokens == 8192
    assert not resolve([(None, "litellm's model information")], None).known
    assert Budget(16_000, "x").prompt_tokens == 12_000  # room kept for the answer
    assert Budget(200_000, "x").prompt_tokens == 200_000 - 8192
    assert stated_window("This model's maximum context length is 4096 tokens. However") == 4096
    assert stated_window("prompt is too long") is None


def test_config_shows_the_configured_models_budget(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("CUDAOPT_MODEL", "anthropic/claude-sonnet-4-5")
    monkeypatch.setenv("COLUMNS", "200")
    shown = CliRunner().invoke(app, ["config"])
    assert shown.exit_code == 0, shown.output
    assert "context window 200,000 tokens (litellm's model information)" in shown.output
    (tmp_path / "cudaopt.toml").write_text("context_tokens = 65536\n")
    shown = CliRunner().invoke(app, ["config"])
    assert "context window 65,536 tokens (setting context_tokens)" in shown.output
    assert "context_tokens" in shown.output and "65536" in shown.output
    shown = CliRunner().invoke(app, ["config", "--json"])
    assert json.loads(shown.output)["context_budget"] == {
        "value": {"window_tokens": 65536, "source": "setting context_tokens",
                  "prompt_tokens": Budget(65536, "x").prompt_tokens},
        "source": "setting context_tokens"}
