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


def test_no_command_module_of_the_cli_imports_another() -> None:
    """What two commands share lives in `cudaopt.cli.common` or `cudaopt.cli.style`, so a
    command's front end never reaches into another's (and there is no `cudaopt/cli_*.py`)."""
    import ast

    from cudaopt import ROOT

    package = ROOT / "cudaopt" / "cli"
    modules = {p.stem: ast.parse(p.read_text()) for p in package.glob("*.py")}
    commands = {name for name, tree in modules.items() if any(
        isinstance(node, ast.FunctionDef) and node.name == "register" for node in tree.body)}
    assert {"judge", "optimize", "misc", "bench", "models", "env", "synth"} <= commands
    for name in commands:
        imported = {alias.name.split(".")[0] if node.module == "cudaopt.cli" else
                    (node.module or "").removeprefix("cudaopt.cli.").split(".")[0]
                    for node in ast.walk(modules[name]) if isinstance(node, ast.ImportFrom)
                    if (node.module or "").startswith("cudaopt.cli") for alias in node.names}
        assert not imported & (commands - {name}), f"cudaopt.cli.{name} imports {imported}"
    assert not list((ROOT / "cudaopt").glob("cli_*.py"))
