"""Swapped kernels as `torch.library` custom ops on CPU: real builds, real compiles, real
exports. The C++ RMSNorm kernel of the session fixture is built once for all of them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

import cudaopt
from cudaopt.judge.checks.guard import OpGuard
from cudaopt.models.entry import load_entry, parse_entry
from cudaopt.models.swap import SwapError

from .conftest import HERE

TINY = HERE / "tinylm.py"


def _norm_op(model: torch.nn.Module) -> torch._ops.OpOverloadPacket:
    module = type(model.blocks[0].norm1).__module__
    return __import__("sys").modules[module].cuda_extension.rms_norm


@pytest.fixture(scope="module")
def swapped(norm_run: Path) -> tuple[torch.nn.Module, tuple, torch.Tensor]:
    model, inputs = load_entry(parse_entry(f"{TINY}:build"), "cpu")
    with torch.no_grad():
        before = model(*inputs)
        cudaopt.swap(model, "blocks.*.norm*", norm_run, inputs=inputs)
    return model, inputs, before


def test_swapped_kernel_is_a_custom_op(swapped: tuple) -> None:
    model, inputs, before = swapped
    op = _norm_op(model)
    assert isinstance(op, torch._ops.OpOverloadPacket) and op._qualified_op_name.startswith(
        "cudaopt_") and op._qualified_op_name.endswith("::rms_norm")
    x = torch.randn(2, 16, 32)
    torch.library.opcheck(op.default, (x, torch.randn(32), 1e-6))
    with torch.no_grad():
        torch.testing.assert_close(model(*inputs), before, atol=1e-4, rtol=1e-4)


def test_swapped_model_compiles_without_graph_breaks(swapped: tuple) -> None:
    model, inputs, before = swapped
    torch._dynamo.reset()
    explained = torch._dynamo.explain(model)(*inputs)
    assert explained.graph_break_count == 0 and explained.graph_count == 1
    compiled = torch.compile(model, fullgraph=True)
    with torch.no_grad():
        torch.testing.assert_close(compiled(*inputs), before, atol=1e-4, rtol=1e-4)


def test_swapped_model_exports(swapped: tuple) -> None:
    model, inputs, before = swapped
    exported = torch.export.export(model, tuple(inputs))
    names = {str(n.target) for n in exported.graph.nodes if n.op == "call_function"}
    assert any(name.endswith("rms_norm.default") for name in names), names
    with torch.no_grad():
        torch.testing.assert_close(exported.module()(*inputs), before, atol=1e-4, rtol=1e-4)


def test_a_lying_fake_implementation_is_refused(norm_run: Path, tmp_path: Path) -> None:
    """model_new.py registers its own custom op, whose fake drops the last dimension."""
    run = tmp_path / "liar"
    shutil.copytree(norm_run, run)
    (run / "best" / "model_new.py").write_text(_LIAR)
    model, inputs = load_entry(parse_entry(f"{TINY}:build"), "cpu")
    with pytest.raises(SwapError, match=r"custom op liar::rms_norm .*fails torch.library.opcheck"):
        cudaopt.swap(model, "blocks.*.norm*", run, task=_task(norm_run))
    assert type(model.blocks[0].norm1).__name__ == "RMSNorm"


def _task(run: Path) -> Path:
    import json

    return Path(json.loads((run / "meta.json").read_text())["task"])


_LIAR = '''import cuda_extension
import torch
import torch.nn as nn


@torch.library.custom_op("liar::rms_norm", mutates_args=())
def rms_norm(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    return cuda_extension.rms_norm(x, w, eps)


@rms_norm.register_fake
def _(x, w, eps):
    return x.new_empty(x.shape[:-1])


class ModelNew(nn.Module):
    def __init__(self, size: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size))

    def forward(self, x):
        return rms_norm(x, self.weight, 1e-6)
'''


def test_the_guard_sees_inside_custom_ops() -> None:
    """Wrapping a torch operator in a custom op does not hide it from the operator guard."""

    @torch.library.custom_op("guardtest::hidden_mm", mutates_args=())
    def hidden_mm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.mm(a, b)

    a = torch.randn(4, 4)
    guard = OpGuard()
    with guard:
        out = hidden_mm(a, a)
    torch.testing.assert_close(out, a @ a)
    assert "aten.mm" in guard.seen, guard.seen
    allowed = OpGuard(["mm"])
    with allowed:
        hidden_mm(a, a)
    assert not allowed.seen


def test_a_data_dependent_output_stays_a_plain_call_and_is_named() -> None:
    """A kernel whose output size follows the data: no fake implementation can say it."""
    import types
    import warnings

    from cudaopt.models.customops import KernelNotRegistered, make_ops

    ext = types.ModuleType("positives_ext")
    ext.__file__ = "positives_ext.so"
    ext.positives = lambda x: x[x > 0].clone()
    module = types.ModuleType("model_new")
    module.ext = ext
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ops = make_ops(module, lambda: module.ext.positives(torch.randn(64)), "cudaopt_t1",
                       "a source")
    assert "depends on the data" in ops.plain["positives"] and module.ext is ext
    (warning,) = [w for w in caught if w.category is KernelNotRegistered]
    assert "kernel positives of a source is not a custom op" in str(warning.message)


def test_check_model_compiled_against_compiled(project: Path, norm_run: Path,
                                               tmp_path: Path) -> None:
    """`check-model --compile`: the swapped model compiled vs the original compiled, with
    no graph break and no recompile; the eager figures stay beside it."""
    import json

    from typer.testing import CliRunner

    from cudaopt.cli import app

    out = tmp_path / "result.json"
    result = CliRunner().invoke(app, ["check-model", f"{project / 'tinylm.py'}:build", "--swap",
                                      f"blocks.*.norm*={norm_run}", "--device", "cpu",
                                      "--json", str(out), "--time-budget", "2", "--compile",
                                      "default"])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["model"]["correct"] and data["model"]["speedup_vs_eager"]
    assert data["compiled"]["correct"] and data["compiled"]["speedup_vs_compile"]
    assert data["compile_health"] == {"graphs": 1, "graph_breaks": 0, "recompiles": 0,
                                      "break_reasons": []}
    (kernel,) = data["kernels"]
    assert kernel["ops"] and kernel["ops"][0].endswith("::rms_norm") and not kernel["plain_calls"]
    assert "compiled (default)" in result.output and "0 graph break(s)" in result.output


def test_a_submodule_without_tensors_is_swapped_where_its_model_runs() -> None:
    """An activation has no parameters to say where it runs: the model's do (a CUDA kernel
    probed on CPU inputs was refused by its own device check), else the given inputs."""
    from cudaopt.models.swap import device_for

    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.GELU()).to("meta")
    assert device_for(model, "1", None) == torch.device("meta")
    bare = torch.nn.Sequential(torch.nn.GELU())
    assert device_for(bare, "0", [torch.empty(2, device="meta")]) == torch.device("meta")
    assert device_for(bare, "0", None) == torch.device("cpu")
