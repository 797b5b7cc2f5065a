"""profile-model, extract, swap and check-model on a small transformer, on CPU: real
tracing, real kernel builds, real judging, a real git repository."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

import cudaopt
from cudaopt.cli import app
from cudaopt.judge import JudgeOptions, check
from cudaopt.models.entry import load_entry, parse_entry
from cudaopt.models.origin import read_origin
from cudaopt.models.sources import resolve
from cudaopt.models.swap import SwapError
from cudaopt.task import BadInput

from .conftest import HERE, git

runner = CliRunner()
TINY = HERE / "tinylm.py"


def test_profile_ranks_parts_and_shares_add_up() -> None:
    result = runner.invoke(app, ["profile-model", f"{TINY}:build", "--device", "cpu",
                                 "--iters", "3", "--json", "-"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout[result.stdout.index("{"):])
    modules = {m["path"]: m for m in data["modules"]}
    assert data["compile_ms"] is not None and data["eager_ms"] > 0
    assert sum(m["self_share"] for m in data["modules"]) == pytest.approx(1.0, abs=1e-6)
    assert modules[""]["incl_share"] == pytest.approx(1.0)
    for path, m in modules.items():  # inclusive = self + the called children's inclusive
        children = [c for p, c in modules.items() if p and _caller(p, modules) == path]
        assert m["incl_ms"] == pytest.approx(m["self_ms"] + sum(c["incl_ms"] for c in children),
                                             rel=1e-6, abs=1e-9)
    self_ms = [m["self_ms"] for m in data["modules"]]
    assert self_ms == sorted(self_ms, reverse=True)
    assert modules["blocks.1.mlp"]["calls"] == 1
    assert modules["embed"]["inputs"][0]["dtype"] == "int64"
    assert modules["blocks.2.attn"]["inputs"][0]["shape"] == [2, 16, 32]


def _caller(path: str, modules: dict) -> str:
    """The nearest enclosing module that was called (a ModuleList never is)."""
    parts = path.split(".")[:-1]
    while parts and ".".join(parts) not in modules:
        parts.pop()
    return ".".join(parts)


def test_bad_entries_are_refused_before_running(tmp_path: Path) -> None:
    cases = {"nofile.py:build": "not found", f"{TINY}:nope": "defines no top-level 'nope'",
             f"{TINY}:not_a_pair": r"must return \(model, inputs\)", "no_colon": "must be path"}
    for spec, message in cases.items():
        with pytest.raises(BadInput, match=message):
            load_entry(parse_entry(spec, tmp_path), "cpu")
    result = runner.invoke(app, ["extract", f"{TINY}:nope", "--top", "1", "--device", "cpu"])
    assert result.exit_code == 2 and "nope" in result.output


def test_module_entries_load_from_the_given_folder() -> None:
    model, inputs = load_entry(parse_entry("tests.models.tinylm:build", HERE.parent.parent), "cpu")
    assert type(model).__name__ == "TinyLM" and inputs[0].shape == (2, 16)


def test_extract_deduplicates_and_records_origin(tasks: dict, project: Path) -> None:
    norm, mlp, attn = tasks["RMSNorm"], tasks["MLP"], tasks["Attention"]
    assert norm.paths == [f"blocks.{i}.norm{j}" for i in range(3) for j in (1, 2)] + ["norm"]
    assert mlp.paths == [f"blocks.{i}.mlp" for i in range(3)] and len(attn.paths) == 3
    for item in (norm, mlp, attn):
        code = "".join(line for line in item.file.read_text().splitlines(True)
                       if not line.startswith("#"))
        assert item.mode == "traced" and "tinylm" not in code and "import_entry" not in code
        origin = read_origin(item.file)
        assert origin["paths"] == item.paths and origin["entry"].endswith("tinylm.py:build")
        assert origin["inputs"][0]["shape"] == [2, 16, 32]
    assert read_origin(mlp.file)["state"]["fc1.weight"] == [[128, 32], "float32"]
    assert "def get_init_inputs():\n    return [32, 128]" in mlp.file.read_text()


def test_identity_candidates_are_judged_correct(tasks: dict, tmp_path: Path) -> None:
    """Each task's own Model renamed ModelNew passes `check` (PyTorch operators allowed)."""
    options = JudgeOptions(device="cpu", profile=False, allow=["*"], trials=2)
    for name, item in tasks.items():
        folder = tmp_path / name
        folder.mkdir()
        candidate = folder / "model_new.py"
        candidate.write_text(item.file.read_text().replace("class Model(", "class ModelNew("))
        verdict = check(item.file, candidate, options)
        assert verdict.correct and verdict.status.value == "ok", (name, verdict.error)


def test_untraceable_module_imports_user_code(tmp_path: Path) -> None:
    out = tmp_path / "tasks"
    result = runner.invoke(app, ["extract", f"{TINY}:build_gated", "1", "--out", str(out),
                                 "--device", "cpu"])
    assert result.exit_code == 0, result.output
    task = out / "1.py"
    assert "NOT self-contained" in task.read_text()
    assert read_origin(task)["mode"] == "imported"
    candidate = tmp_path / "model_new.py"
    candidate.write_text(task.read_text().replace("class Model(", "class ModelNew("))
    verdict = check(task, candidate, JudgeOptions(device="cpu", profile=False, allow=["*"],
                                                  trials=2))
    assert verdict.correct, verdict.error


def test_extract_top_writes_the_hottest_parts(tmp_path: Path) -> None:
    result = runner.invoke(app, ["extract", f"{TINY}:build", "--top", "2", "--out",
                                 str(tmp_path), "--device", "cpu"])
    assert result.exit_code == 0, result.output
    written = sorted(p.name for p in tmp_path.glob("*.py"))
    assert len(written) == 2 and all(read_origin(tmp_path / p) for p in written)


def test_swap_replaces_every_matching_layer(norm_run: Path) -> None:
    model, inputs = load_entry(parse_entry(f"{TINY}:build"), "cpu")
    with torch.no_grad():
        before = model(*inputs)
        swapped = cudaopt.swap(model, "blocks.*.norm*", norm_run, inputs=inputs)
        after = model(*inputs)
    assert swapped == [f"blocks.{i}.norm{j}" for i in range(3) for j in (1, 2)]
    assert all(type(model.get_submodule(p)).__name__ == "ModelNew" for p in swapped)
    assert type(model.norm).__name__ == "RMSNorm"
    torch.testing.assert_close(after, before, atol=1e-4, rtol=1e-4)


def test_mismatched_swaps_are_refused(norm_run: Path) -> None:
    wide, _ = load_entry(parse_entry(f"{TINY}:build_wrong_shape"), "cpu")
    with pytest.raises(SwapError, match=r"weight: float32\[48\] here, float32\[32\] in the task"):
        cudaopt.swap(wide, "blocks.*.norm*", norm_run)
    assert type(wide.blocks[0].norm1).__name__ == "RMSNorm"
    short, inputs = load_entry(parse_entry(f"{TINY}:build_short"), "cpu")
    with pytest.raises(SwapError, match=r"receives float32\[2,8,32\].*made for float32\[2,16,32\]"):
        cudaopt.swap(short, "blocks.*.norm*", norm_run, inputs=inputs)
    with pytest.raises(SwapError, match="no submodule matches 'blocks.*.nrm'"):
        cudaopt.swap(short, "blocks.*.nrm", norm_run)


@pytest.fixture(scope="module")
def checked(project: Path, norm_run: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One `check-model --commit` run, its JSON and its printed report."""
    out = tmp_path_factory.mktemp("check") / "result.json"
    result = runner.invoke(app, ["check-model", f"{project / 'tinylm.py'}:build", "--swap",
                                 f"blocks.*.norm*={norm_run}", "--device", "cpu", "--json",
                                 str(out), "--time-budget", "2", "--commit", "--branch",
                                 "cudaopt/tinylm-norms"])
    import traceback

    crash = "".join(traceback.format_exception(result.exception)) if result.exception else ""
    return {"code": result.exit_code, "output": result.output + crash,
            "json": json.loads(out.read_text()) if out.exists() else None}


def test_check_model_judges_the_whole_model(checked: dict) -> None:
    assert checked["code"] == 0, checked["output"]
    data = checked["json"]
    model = data["model"]
    assert model["correct"] and model["status"] == "ok" and model["trials"] == 5
    assert model["speedup_vs_eager"] and model["speedup_vs_compile"]
    (kernel,) = data["kernels"]
    assert len(kernel["paths"]) == 6 and kernel["verdict"]["correct"]
    assert kernel["verdict"]["speedup_vs_compile"] and not kernel["verdict"]["violations"]
    assert "whole model" in checked["output"] and "blocks.*.norm*" in checked["output"]


def test_check_model_commits_a_loader_branch(checked: dict, project: Path) -> None:
    assert "on branch cudaopt/tinylm-norms" in checked["output"], checked["output"]
    assert git(project, "branch", "--show-current").strip() == "main"
    assert git(project, "status", "--porcelain").strip() == "?? cudaopt-tasks/\n?? notes.txt" \
        or "?? notes.txt" in git(project, "status", "--porcelain")
    files = git(project, "ls-tree", "-r", "--name-only", "cudaopt/tinylm-norms").split()
    assert "cudaopt_optimized/__init__.py" in files and "tinylm.py" in files
    assert "cudaopt_optimized/k0_blocks.0.norm1/kernels/rms_norm.cpp" in files
    out = project.parent / "checkout"
    git(project, "worktree", "add", "-q", str(out), "cudaopt/tinylm-norms")
    import importlib.util

    spec = importlib.util.spec_from_file_location("cudaopt_optimized",
                                                  out / "cudaopt_optimized" / "__init__.py")
    loader = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loader)
    model, inputs = load_entry(parse_entry(f"{out / 'tinylm.py'}:build"), "cpu")
    with torch.no_grad():
        before = model(*inputs)
        loader.load_optimized(model, inputs)
        torch.testing.assert_close(model(*inputs), before, atol=1e-4, rtol=1e-4)
    assert type(model.blocks[2].norm2).__name__ == "ModelNew"


def test_swap_from_a_branch(checked: dict, project: Path, norm_run: Path) -> None:
    """A branch is read through git: nothing is checked out, the working tree unchanged."""
    before = git(project, "status", "--porcelain")
    model, inputs = load_entry(parse_entry(f"{TINY}:build"), "cpu")
    swapped = cudaopt.swap(model, "blocks.1.norm*", "cudaopt/tinylm-norms", repo=project,
                           inputs=inputs)
    assert swapped == ["blocks.1.norm1", "blocks.1.norm2"]
    assert git(project, "status", "--porcelain") == before
    exported = resolve("cudaopt/tinylm-norms", repo=project)  # byte for byte: one build
    assert exported.model_new.read_bytes() == (norm_run / "best" / "model_new.py").read_bytes()
    with pytest.raises(BadInput, match="neither a run folder"):
        cudaopt.swap(model, "norm", project / "notes.txt")


def test_check_model_refuses_bad_swaps_early(norm_run: Path, project: Path) -> None:
    result = runner.invoke(app, ["check-model", f"{TINY}:build", "--swap", "nonsense",
                                 "--device", "cpu"])
    assert result.exit_code == 2 and "PATTERN=SOURCE" in result.output
    result = runner.invoke(app, ["check-model", f"{TINY}:build_wrong_shape", "--swap",
                                 f"blocks.*.norm*={norm_run}", "--device", "cpu"])
    assert result.exit_code == 2 and "refusing to swap" in result.output
    other = norm_run.parent / "norm-2"  # another kernel binding the same function name
    shutil.copytree(norm_run, other, ignore=shutil.ignore_patterns(".cudaopt"))
    cpp = other / "best" / "kernels" / "rms_norm.cpp"
    cpp.write_text("// a second version\n" + cpp.read_text())
    result = runner.invoke(app, ["check-model", f"{project / 'tinylm.py'}:build", "--device",
                                 "cpu", "--swap", f"blocks.*.norm1={norm_run}", "--swap",
                                 f"blocks.*.norm2={other}"])
    assert result.exit_code == 2 and "bind a function named 'rms_norm'" in result.output
