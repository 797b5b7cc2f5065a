"""The sandbox's seams without a model: choosing it (`--sandbox`), the environment it
builds, the bwrap line, and the other ways out of the workspace: file tools through
symlinks, candidate copies made outside the sandbox, and secrets in a commit."""

from __future__ import annotations

import os
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cudaopt.agent import records
from cudaopt.agent.environment.shell import LocalShell
from cudaopt.agent.environment.workspace import Workspace
from cudaopt.cli import app
from cudaopt.runs.gitops import SecretFoundError, commit_accepted
from cudaopt.sandbox import (
    NONE_WARNING,
    SandboxLimits,
    SandboxUnavailable,
    resolve_sandbox,
)
from cudaopt.sandbox.bwrap import BwrapStatus, bwrap_argv
from cudaopt.sandbox.secrets import scrub_env
from tests.misc.misc_helpers import make_candidate, make_meta, make_verdict

BROKEN = BwrapStatus(False, "bwrap not found on PATH")


def test_auto_refuses_without_bwrap_and_names_the_fixes(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    monkeypatch.setattr("cudaopt.sandbox.cached_probe", lambda: BROKEN)
    for mode in ("auto", "bwrap"):
        with pytest.raises(SandboxUnavailable) as caught:
            resolve_sandbox(mode)
        assert "install bubblewrap" in str(caught.value)
        assert "apt-get install bubblewrap" in str(caught.value)
        assert "--sandbox none" in str(caught.value)
    none = resolve_sandbox("none")
    assert none.kind == "none" and none.warning == NONE_WARNING
    with pytest.raises(ValueError, match="docker"):
        resolve_sandbox("docker")


def test_cli_refuses_to_start_or_warns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("cudaopt.sandbox.cached_probe", lambda: BROKEN)
    task = tmp_path / "model.py"
    task.write_text("class Model: pass\n")
    runner = CliRunner()
    args = ["optimize", str(task), "--model", "openai/x", "--api-base", "http://127.0.0.1:9/v1",
            "--no-commit"]
    refused = runner.invoke(app, args)
    assert refused.exit_code == 2 and "install bubblewrap" in refused.output
    assert not (tmp_path / ".cudaopt").exists()  # refused before anything was created
    unconfined = runner.invoke(app, [*args, "--sandbox", "none", "--max-steps", "1"])
    assert "warning: --sandbox none" in unconfined.output  # then fails on the bad task
    assert unconfined.exit_code == 2


def test_environment_allow_list() -> None:
    env = {"PATH": "/usr/bin", "LC_ALL": "C", "CUDA_VISIBLE_DEVICES": "1", "HOME": "/home/u",
           "SSH_AUTH_SOCK": "/run/user/1/ssh", "OPENAI_API_KEY": "sk-abcdefghij",
           "CUDAOPT_API_KEY": "sk-klmnopqrst", "AWS_REGION": "eu", "SOME_PROVIDER": "k1234567",
           "CUDAOPT_URL": "https://u:sk-abcdefghij@host", "TORCH_CUDA_ARCH_LIST": "9.0"}
    kept = scrub_env(env, {"CUDA_VISIBLE_DEVICES": "1"})
    assert kept == {"PATH": "/usr/bin", "LC_ALL": "C", "TORCH_CUDA_ARCH_LIST": "9.0"}


def test_bwrap_line_confines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / "proj").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    status = BwrapStatus(True, "bubblewrap 0.8.0", "/usr/bin/bwrap",
                         frozenset({"--disable-userns", "--size"}))
    argv = bwrap_argv(status, home / "proj", [], [], [], [], 64, {})
    line = " ".join(argv)
    for flag in ("--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
                 "--new-session", "--cap-drop ALL", "--ro-bind / /", "--dev /dev",
                 "--proc /proc", "--tmpfs /run", f"--size {64 << 20} --tmpfs /tmp",
                 f"--tmpfs {home}", f"--bind {home / 'proj'} {home / 'proj'}",
                 f"--remount-ro {home}"):
        assert flag in line, flag
    assert line.index(f"--tmpfs {home}") < line.index(f"--bind {home / 'proj'}")
    assert "--bind / " not in line and "--share-net" not in line


def test_file_tools_resolve_symlinks(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "model.py").write_text("task\n")
    (tmp_path / "secret.txt").write_text("outside\n")
    (root / "alias.py").symlink_to(root / "model.py")
    (root / "peek.txt").symlink_to(tmp_path / "secret.txt")
    (root / "bin").symlink_to(tmp_path)
    tools = Workspace(root, LocalShell(dict(os.environ)), ("model.py", "skills"))
    assert "read-only" in tools.call("write", {"path": "alias.py", "content": "x"}).output
    assert "read-only" in tools.call("edit", {"path": "alias.py", "old": "task",
                                              "new": "x"}).output
    for call in (("read", {"path": "peek.txt"}), ("write", {"path": "bin/x", "content": "x"}),
                 ("grep", {"pattern": "outside", "path": "peek.txt"})):
        assert "outside the workspace" in tools.call(*call).output
    assert tools.call("grep", {"pattern": "outside"}).output == "no matches"
    assert (root / "model.py").read_text() == "task\n" and not (tmp_path / "x").exists()


def test_candidate_copies_never_follow_symlinks(tmp_path: Path) -> None:
    """The loop copies records and the workspace outside the sandbox (stage, best/, the
    commit): a planted symlink must not carry a file the sandbox could not read."""
    secret = tmp_path / "id_rsa"
    secret.write_text("FAKE-KEY\n")
    folder = tmp_path / "record"
    (folder / "kernels").mkdir(parents=True)
    (folder / "model_new.py").symlink_to(secret)
    (folder / "kernels" / "ok.cpp").write_text("int ok;\n")
    (folder / "kernels" / "leak.cpp").symlink_to(secret)
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "k.cpp").write_text("FAKE-KEY\n")
    (folder / "kernels" / "sub").symlink_to(tmp_path / "keys")
    assert records.candidate_files(folder) == [folder / "kernels" / "ok.cpp"]
    other = tmp_path / "other"
    other.mkdir()
    (other / "kernels").symlink_to(tmp_path / "keys")
    assert records.candidate_files(other) == []


def test_commit_refuses_dotenv_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "repo"
    (root / "proj").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    task = root / "proj" / "model.py"
    task.write_text("class Model: pass\n")
    (root / "proj" / ".env").write_text("SOME_PROVIDER=dotenv-0123456789\n")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "t")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "t@example.com")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-0123456789")
    cand = make_candidate(tmp_path / "cand")
    for leak, name in (("dotenv-0123456789", "SOME_PROVIDER"),
                       ("aws-0123456789", "AWS_SECRET_ACCESS_KEY")):
        (cand / "kernels" / "add.cu").write_text(f"// {leak}\n")
        with pytest.raises(SecretFoundError, match=name):
            commit_accepted(task, cand, make_verdict(), make_meta(task))


def test_none_mode_keeps_the_limits_that_need_no_namespaces(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-none-mode-0123456789")
    sandbox = replace(resolve_sandbox("none"), limits=SandboxLimits(file_mb=1, workspace_mb=2))
    result = sandbox.run("env; head -c 2000000 /dev/zero > big; head -c 900000 /dev/zero > a; "
                         "cp a b; cp a c", tmp_path, dict(os.environ), timeout_s=30)
    assert "sk-test-none-mode" not in result.output
    assert "[sandbox] file size limit" in result.output
    assert "[sandbox] workspace size limit" in result.output
