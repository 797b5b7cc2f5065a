"""Each type lives on the lowest floor that uses it: importing a floor never pulls in a
floor above it (the sandbox knows nothing of the agent; a policy's errors need no policy).

Read from the sources (imports inside functions count): no module of cudaopt imports itself
through others, the judge's folders import only the folders below them, and the rest of
cudaopt reaches the judge only through its door, `cudaopt.judge`."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

FLOORS = {  # module: floors above it that importing it must not load
    # the trusted evaluator never loads the agent, the model client, git or a cluster
    "cudaopt.judge": ["cudaopt.agent", "litellm", "git", "ray", "cudaopt.runs.gitops"],
    "cudaopt.judge.roles.worker": ["cudaopt.agent", "litellm", "git", "ray"],  # the workers
    "cudaopt.judge.serving.server": ["cudaopt.agent", "litellm", "git", "ray"],
    "cudaopt.sandbox": ["cudaopt.agent"],
    # the agent's floor knows none of its rooms; the environment never loads the model side
    "cudaopt.agent.errors": ["cudaopt.agent.policy", "cudaopt.agent.environment"],
    "cudaopt.agent.config": ["cudaopt.agent.policy", "cudaopt.agent.environment",
                             "cudaopt.agent.loop", "cudaopt.agent.judging"],
    "cudaopt.agent.environment.workspace": ["cudaopt.agent.policy", "cudaopt.agent.loop",
                                            "litellm"],
    "cudaopt.agent.policy.replay": ["cudaopt.agent.policy.model", "cudaopt.agent.policy.llm"],
    "cudaopt.agent.judging": ["cudaopt.agent.run", "cudaopt.agent.loop"],
    # the budget, compaction and the model call work for any policy: litellm stays in llm
    "cudaopt.agent.policy.asking": ["litellm", "cudaopt.agent.policy.llm", "cudaopt.agent.run"],
    # run folders and reports are read by `show` and the judge without the agent or git
    "cudaopt.runs.folder": ["cudaopt.agent", "cudaopt.reports", "git"],
    "cudaopt.reports.run": ["cudaopt.agent", "cudaopt.cli", "litellm", "git"],
    "cudaopt.executor": ["ray"],  # Ray is optional: only a cluster executor loads it
    "cudaopt.synth.probe": ["litellm", "cudaopt.agent"],  # the child that runs tasks
    "cudaopt.synth.api": ["litellm"],  # only --model loads it
    # every command's start (the agent's `cudaopt verify` and `profile` on each step) reads
    # all command modules: what only one step of one command needs is loaded in that step
    "cudaopt.cli": ["torch", "git", "litellm", "ray", "cudaopt.agent.run", "cudaopt.executor",
                    "cudaopt.bench.runner", "cudaopt.sandbox", "cudaopt.runs.gitops"],
}
PROBE = """
import importlib, json, sys
module, above = sys.argv[1], json.loads(sys.argv[2])
importlib.import_module(module)
print(json.dumps(sorted(m for m in sys.modules if any(m == a or m.startswith(a + ".")
                                                      for a in above))))
"""


def test_no_floor_imports_a_floor_above_it() -> None:
    """One fresh interpreter per floor, all at once: each imports torch for seconds."""
    probes = {module: subprocess.Popen([sys.executable, "-c", PROBE, module, json.dumps(above)],
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
              for module, above in FLOORS.items()}
    for module, probe in probes.items():
        out, err = probe.communicate(timeout=300)
        assert probe.returncode == 0, f"importing {module} failed:\n{err}"
        assert json.loads(out) == [], f"{module} loads {out.strip()}"


# The judge's folders, bottom to top, as its door's docstring lists them: each may import
# only itself and those before it. `api` is the module that runs the pipeline in order.
JUDGE_LAYERS = ["verdict", "building", "workers", "checks", "timing", "insight", "roles", "api",
                "serving"]
PACKAGE = Path(__file__).resolve().parents[1] / "cudaopt"


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The cudaopt modules `name` imports anywhere in its file (inside functions too): for
    `from X import Y` the module X.Y when there is one, else X; relative imports resolved."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join(parts + ([base] if base else []))
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return {module for module in found if module in known and module != name}


def _graph() -> dict[str, set[str]]:
    known = _modules()
    return {name: _imports(name, path, known) for name, path in known.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per back edge a depth-first walk meets: enough to name each circle."""
    state: dict[str, int] = {}  # 1: on the walk's path, 2: done
    path: list[str] = []
    cycles: list[list[str]] = []

    def walk(module: str) -> None:
        state[module] = 1
        path.append(module)
        for imported in sorted(graph[module]):
            if state.get(imported) == 1:
                cycles.append(path[path.index(imported):] + [imported])
            elif imported not in state:
                walk(imported)
        path.pop()
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            walk(module)
    return cycles


def test_no_module_of_cudaopt_imports_itself_through_others() -> None:
    cycles = _cycles(_graph())
    assert not cycles, "import circles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def _judge_layer(module: str) -> str | None:
    """The folder (or top-level module) of the judge that `module` lies in; None for the
    door, `cudaopt.judge` itself, and for modules outside the judge."""
    parts = module.split(".")
    return parts[2] if parts[:2] == ["cudaopt", "judge"] and len(parts) > 2 else None


def test_the_judges_folders_import_only_those_below_them() -> None:
    graph = _graph()
    upward = []
    for module, imported in sorted(graph.items()):
        layer = _judge_layer(module)
        if layer is None:
            continue
        assert layer in JUDGE_LAYERS, f"{module}: the judge's folder {layer} has no place in "\
                                      "JUDGE_LAYERS (nor in the door's docstring)"
        for target in sorted(imported):
            below = _judge_layer(target)
            if target == "cudaopt.judge" or (
                    below is not None and JUDGE_LAYERS.index(below) > JUDGE_LAYERS.index(layer)):
                upward.append(f"{module} ({layer}) imports {target} ({below or 'the door'})")
    assert not upward, "imports running up the judge's layers:\n" + "\n".join(upward)


def test_the_doors_docstring_lists_the_judges_folders_in_their_order() -> None:
    door = ast.get_docstring(ast.parse((PACKAGE / "judge" / "__init__.py").read_text())) or ""
    listed = re.findall(r"^- `(\w+)/?`", door, re.MULTILINE)
    assert listed == JUDGE_LAYERS


def test_the_rest_of_cudaopt_uses_the_judge_only_through_its_door() -> None:
    inside = [f"{module} imports {target}" for module, imported in sorted(_graph().items())
              if _judge_layer(module) is None and module != "cudaopt.judge"
              for target in sorted(imported) if _judge_layer(target) is not None]
    assert not inside, "judge internals imported outside the judge:\n" + "\n".join(inside)


# The agent's rooms, bottom to top (cudaopt/agent/__init__.py names them): each may import
# only itself and those below. The floor is the handful of modules every room reads.
AGENT_FLOOR = {"config", "errors", "events", "prompts", "records", "trajectory"}
AGENT_ROOMS = ["floor", "environment", "policy", "loop"]


def _agent_room(module: str) -> str | None:
    """The room of the agent that `module` lies in; None outside the agent (and for its door)."""
    parts = module.split(".")
    if parts[:2] != ["cudaopt", "agent"] or len(parts) < 3:
        return None
    if parts[2] in ("environment", "policy"):
        return parts[2]
    return "floor" if parts[2] in AGENT_FLOOR else "loop"


def test_the_agents_rooms_import_only_those_below_them() -> None:
    upward = [f"{module} ({_agent_room(module)}) imports {target} ({_agent_room(target)})"
              for module, imported in sorted(_graph().items()) if _agent_room(module)
              for target in sorted(imported) if _agent_room(target)
              and AGENT_ROOMS.index(_agent_room(target) or "") >
              AGENT_ROOMS.index(_agent_room(module) or "")]
    assert not upward, "imports running up the agent's rooms:\n" + "\n".join(upward)


def test_the_top_of_cudaopt_holds_only_what_every_part_uses() -> None:
    """Settings, the task file and the package entry; everything else lives in a package
    named for its job (reports, runs, the CLI's helpers)."""
    loose = {path.stem for path in PACKAGE.glob("*.py")} - {"__init__", "config", "task"}
    assert not loose, f"loose modules at the top of cudaopt: {sorted(loose)}"


def test_no_command_module_of_the_cli_imports_another() -> None:
    """What two commands share lives in `cudaopt.cli.common` or `cudaopt.cli.style`, so a
    command's front end never reaches into another's (and there is no `cudaopt/cli_*.py`)."""
    package = PACKAGE / "cli"
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
    assert not list(PACKAGE.glob("cli_*.py"))


def test_every_package_folder_is_in_pyprojects_package_list() -> None:
    """The package list is explicit (templates/ and skills/ are mapped in from outside), so
    a new folder left out of it would be missing from a regular install."""
    block = re.search(r"^packages = \[(.*?)\]", (PACKAGE.parent / "pyproject.toml").read_text(),
                      re.MULTILINE | re.DOTALL)
    listed = set(re.findall(r'"([\w.]+)"', block.group(1)))  # tomllib is 3.11+
    folders = {".".join(p.parent.relative_to(PACKAGE.parent).parts)
               for p in PACKAGE.rglob("__init__.py")}
    assert folders <= listed, f"not in pyproject.toml's packages: {sorted(folders - listed)}"
