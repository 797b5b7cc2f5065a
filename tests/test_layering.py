"""Each type lives on the lowest floor that uses it: importing a floor never pulls in a
floor above it (the sandbox knows nothing of the agent; a policy's errors need no policy)."""

from __future__ import annotations

import json
import subprocess
import sys

FLOORS = {  # module: floors above it that importing it must not load
    "cudaopt.sandbox": ["cudaopt.agent"],
    "cudaopt.agent.errors": ["cudaopt.agent.models", "cudaopt.agent.llm", "cudaopt.agent.replay"],
    "cudaopt.agent.replay": ["cudaopt.agent.models", "cudaopt.agent.llm"],
    "cudaopt.agent.judging": ["cudaopt.agent.run"],
    # the budget, compaction and the model call work for any policy: litellm stays in llm
    "cudaopt.agent.asking": ["litellm", "cudaopt.agent.llm", "cudaopt.agent.run"],
    "cudaopt.executor": ["ray"],  # Ray is optional: only a cluster executor loads it
    "cudaopt.synth.probe": ["litellm", "cudaopt.agent"],  # the child that runs tasks
    "cudaopt.synth.api": ["litellm"],  # only --model loads it
}
PROBE = """
import importlib, json, sys
module, above = sys.argv[1], json.loads(sys.argv[2])
importlib.import_module(module)
print(json.dumps(sorted(m for m in sys.modules if any(m == a or m.startswith(a + ".")
                                                      for a in above))))
"""


def test_no_floor_imports_a_floor_above_it() -> None:
    for module, above in FLOORS.items():
        done = subprocess.run([sys.executable, "-c", PROBE, module, json.dumps(above)],
                              capture_output=True, text=True, check=True)
        assert json.loads(done.stdout) == [], f"{module} loads {done.stdout.strip()}"
