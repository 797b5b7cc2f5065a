"""Doctor's checks: each a pass/fail line, none able to crash or hang doctor."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import pytest
import torch

from cudaopt.cli import doctor


def _fake_tool(folder: Path, name: str, script: str) -> None:
    path = folder / name
    path.write_text("#!/bin/sh\n" + script + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH holding only fake tools (plus sh), so checks see exactly what a test wants."""
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", f"{folder}:/bin:/usr/bin")
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    return folder


def test_model_check_passes_and_fails_with_the_reason() -> None:
    calls: list[dict] = []

    def ok(**kw: object) -> None:
        calls.append(kw)

    def down(**kw: object) -> None:
        raise ConnectionError("connection refused\nat http://gpu-box:8000/v1")

    check = doctor.check_model("hosted_vllm/policy", "http://gpu-box:8000/v1", completion=ok)
    assert check.status == "pass" and calls[0]["max_tokens"] == 1
    assert calls[0]["api_base"] == "http://gpu-box:8000/v1"
    check = doctor.check_model("hosted_vllm/policy", "http://gpu-box:8000/v1", completion=down)
    assert check.status == "fail" and "ConnectionError" in check.detail
    assert "gpu-box" in check.detail and "--api-base" in check.hint


def test_sandbox_probe(bin_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor.shutil, "which", lambda name: None)
    check = doctor.check_sandbox()
    assert check.status == "fail" and "install bubblewrap" in check.hint
    assert "--sandbox none" in check.hint
    monkeypatch.undo()
    monkeypatch.setenv("PATH", str(bin_dir))
    _fake_tool(bin_dir, "bwrap", 'echo "bwrap: setting up uid map: Permission denied" >&2; exit 1')
    check = doctor.check_sandbox()
    assert check.status == "fail" and "Permission denied" in check.detail
    assert "namespaces" in check.hint
    # passes only when probed with the namespaces every agent command gets
    probe_ok = 'case "$*" in *--unshare-all*--unshare-user*) exit 0;; esac; exit 3'
    _fake_tool(bin_dir, "bwrap", probe_ok)
    assert doctor.check_sandbox().status == "pass"


def test_nvcc_must_match_torch_cuda_major(bin_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_tool(bin_dir, "nvcc", 'echo "Cuda compilation tools, release 12.8, V12.8.93"')
    monkeypatch.setattr(torch.version, "cuda", "13.0")
    check = doctor.check_nvcc()
    assert check.status == "fail" and "12.8" in check.detail and "13.0" in check.detail
    monkeypatch.setattr(torch.version, "cuda", "12.6")
    assert doctor.check_nvcc().status == "pass"
    (bin_dir / "nvcc").unlink()
    monkeypatch.setattr(doctor, "find_nvcc", lambda: None)
    assert doctor.check_nvcc().status == "fail"


def test_builds_are_skipped_without_their_tools(bin_dir: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor, "check_ninja", lambda: doctor.Check("ninja", "fail", "missing"))
    monkeypatch.setattr(doctor, "check_build", lambda device: pytest.fail("must not build"))
    names = {c.name: c.status for c in doctor.run_doctor(build=True)}
    assert names["builds"] == "skip" and names["model"] == "skip"
    assert list(names)[:6] == ["torch", "gpu", "driver", "nvcc", "ninja", "c++"]


@pytest.mark.slow
def test_trial_cpu_build_passes_and_a_broken_one_names_the_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert doctor.check_build("cpu").status == "pass"
    monkeypatch.setattr(doctor, "_CPU_SOURCE", "torch::Tensor add_one(torch::Tensor x) { oops }\n")
    check = doctor.check_build("cpu")
    assert check.status == "fail" and "binding.cpp" in check.detail and "error" in check.detail
    assert "ninja: build stopped" in check.output


@pytest.mark.slow
def test_model_check_through_litellm_against_a_local_server(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.fakeopenai import FakeOpenAI

    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-key-for-tests")
    with FakeOpenAI([]) as server:
        check = doctor.check_model("openai/fake-policy", server.url)
        assert check.status == "pass", check.detail
        assert server.requests[0]["max_tokens"] == 1
        url = server.url
    check = doctor.check_model("openai/fake-policy", url)  # the server is gone now
    assert check.status == "fail" and "openai/fake-policy at" in check.detail


def test_exit_code_says_what_works() -> None:
    def checks(**status: str) -> list[doctor.Check]:
        return [doctor.Check(name.replace("_", " "), value, "") for name, value in status.items()]

    code, lines = doctor.assess(checks(config="pass", ninja="pass", cpu_build="pass",
                                       gpu="pass", nvcc="pass", cuda_build="pass"))
    assert code == 0 and lines[-1] == "CUDA path: works"
    code, lines = doctor.assess(checks(config="pass", cpu_build="pass", gpu="absent",
                                       sandbox="fail"))
    assert code == 3 and lines[0].startswith("CPU path: works")
    assert "absent" in lines[1] and "sandbox" in lines[2]
    code, lines = doctor.assess(checks(config="pass", cpu_build="pass", gpu="pass", nvcc="fail"))
    assert code == 3 and lines[1] == "CUDA path: broken (nvcc)"
    code, lines = doctor.assess(checks(config="pass", cpu_build="fail", gpu="absent"))
    assert code == 1 and lines == ["CPU path: broken (cpu build); nothing can be judged here"]


@pytest.mark.skipif(torch.cuda.is_available() or shutil.which("nvidia-smi") is not None,
                    reason="needs a machine without a GPU")
def test_a_cpu_only_machine_is_usable_not_failed() -> None:
    """On the machine the README's CPU demo is for: no FAIL for the missing GPU, exit 3."""
    from typer.testing import CliRunner

    from cudaopt.cli import app

    result = CliRunner().invoke(app, ["doctor", "--quick"], env={"COLUMNS": "200"})
    out = result.output
    assert result.exit_code == 3, out
    assert "ABSENT  gpu" in out and "FAIL    gpu" not in out and "FAIL    torch" not in out
    assert "CPU path: works" in out and "CUDA path: absent, no GPU here" in out
