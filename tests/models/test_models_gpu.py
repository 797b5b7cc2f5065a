"""The same flow on a bf16 model on CUDA: profile, extract, a CUDA kernel swapped into every
norm, the whole model judged; prints the kernel's speedup next to the end-to-end one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

import cudaopt
from cudaopt.cli import app
from cudaopt.judge import JudgeOptions, check
from cudaopt.models.entry import load_entry, parse_entry
from cudaopt.models.extract import extract
from cudaopt.models.profile import profile_model

from .conftest import HERE

pytestmark = pytest.mark.gpu


def test_bf16_model_flow_on_cuda(tmp_path: Path) -> None:
    import torch

    shutil.copy(HERE / "tinylm.py", tmp_path / "tinylm.py")
    entry = parse_entry(f"{tmp_path / 'tinylm.py'}:build_bf16")
    model, inputs = load_entry(entry, "cuda")
    prof = profile_model(model, inputs, "cuda", iters=5)
    assert prof.compile_ms and sum(m.self_share for m in prof.modules) == pytest.approx(1.0)
    assert {m.path: m for m in prof.modules}["blocks.0.norm1"].inputs[0].dtype == "bfloat16"

    found = {f.cls: f for f in extract(entry, tmp_path / "tasks", "cuda",
                                       patterns=["blocks.*.norm*", "blocks.*.mlp"])}
    norm, mlp = found["RMSNorm"], found["MLP"]
    assert norm.mode == "traced" and len(norm.paths) == 8 and len(mlp.paths) == 4
    identity = tmp_path / "identity" / "model_new.py"
    identity.parent.mkdir()
    identity.write_text(mlp.file.read_text().replace("class Model(", "class ModelNew("))
    verdict = check(mlp.file, identity, JudgeOptions(device="cuda", profile=False, allow=["*"]))
    assert verdict.correct, verdict.error

    run = norm.file.parent / ".cudaopt" / "runs" / "norm-cuda"
    shutil.copytree(HERE / "rmsnorm_cuda", run / "best")
    (run / "meta.json").write_text(json.dumps({"task": str(norm.file)}))
    with torch.no_grad():
        before = model(*inputs)
        assert len(cudaopt.swap(model, "blocks.*.norm*", run, inputs=inputs)) == 8
        torch.testing.assert_close(model(*inputs), before, atol=1e-2, rtol=1e-2)

    out = tmp_path / "result.json"
    result = CliRunner().invoke(app, ["check-model", entry.spec, "--swap",
                                      f"blocks.*.norm*={run}", "--device", "cuda",
                                      "--json", str(out)])
    print(result.output)
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    kernel = data["kernels"][0]["verdict"]
    assert data["model"]["correct"] and kernel["correct"] and not kernel["violations"]
    print(f"bf16 RMSNorm kernel: {kernel['speedup_vs_eager']:.2f}x vs eager, "
          f"{kernel['speedup_vs_compile']:.2f}x vs torch.compile; whole model: "
          f"{data['model']['speedup_vs_eager']:.2f}x vs eager, "
          f"{data['model']['speedup_vs_compile']:.2f}x vs torch.compile")


def test_cuda_kernel_as_custom_op_compiles_graphs_and_exports(tmp_path: Path) -> None:
    """The CUDA RMSNorm swapped into the bf16 model is a custom op: torch.compile with
    fullgraph=True, CUDA graphs (mode="reduce-overhead") and torch.export all carry it,
    with outputs equal to eager."""
    import torch

    shutil.copy(HERE / "tinylm.py", tmp_path / "tinylm.py")
    entry = parse_entry(f"{tmp_path / 'tinylm.py'}:build_bf16")
    model, inputs = load_entry(entry, "cuda")
    (norm,) = extract(entry, tmp_path / "tasks", "cuda", patterns=["blocks.*.norm*"])
    run = norm.file.parent / ".cudaopt" / "runs" / "norm-cuda"
    shutil.copytree(HERE / "rmsnorm_cuda", run / "best")
    (run / "meta.json").write_text(json.dumps({"task": str(norm.file)}))
    cudaopt.swap(model, "blocks.*.norm*", run, inputs=inputs)
    op = __import__("sys").modules[type(model.blocks[0].norm1).__module__].cuda_extension
    x = torch.randn(8, 256, 1024, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(1024, device="cuda", dtype=torch.bfloat16)
    torch.library.opcheck(op.rms_norm_bf16.default, (x, w, 1e-6))
    with torch.no_grad():
        eager = model(*inputs)
        torch._dynamo.reset()
        assert torch._dynamo.explain(model)(*inputs).graph_break_count == 0
        for mode in ("default", "reduce-overhead"):
            torch._dynamo.reset()
            compiled = torch.compile(model, mode=mode, fullgraph=True)
            for _ in range(3):  # reduce-overhead records its CUDA graph on a later call
                out = compiled(*inputs)
            torch.testing.assert_close(out.clone(), eager, atol=1e-2, rtol=1e-2)
        exported = torch.export.export(model, tuple(inputs))
        torch.testing.assert_close(exported.module()(*inputs), eager, atol=1e-2, rtol=1e-2)
