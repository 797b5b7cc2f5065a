"""Each thing a model's shell command might try, run for real in bwrap: contained, reported
to the model, and the next command still works. Small and bounded: shared machines."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from cudaopt.agent.environment.shell import LocalShell
from tests.sandbox.conftest import Place, Run, alive

pytestmark = pytest.mark.usefixtures("bwrap_ok")


def still_works(run: Run) -> None:
    after = run("echo still-here > alive.txt && cat alive.txt")
    assert after.exit_code == 0 and after.output.strip() == "still-here", after.output


def test_writes_outside_the_workspace_fail(run: Run, place: Place) -> None:
    marker = f"/tmp/cudaopt-escape-{uuid.uuid4().hex}"
    result = run(
        f"echo x > {place.outside}/a.txt; echo x > {place.project}/model.py; "
        f"echo x > /etc/cudaopt-escape; echo x > {marker} && echo private-tmp-ok; "
        f"echo x > {place.records}/note.txt && echo records-ok; echo x > inside.txt"
    )
    assert result.output.count("Read-only file system") == 3, result.output
    assert "private-tmp-ok" in result.output and "records-ok" in result.output
    assert list(place.outside.iterdir()) == [place.outside / ".env"]
    assert (place.project / "model.py").read_text() == "# the user's task\n"
    assert not Path("/etc/cudaopt-escape").exists() and not Path(marker).exists()
    assert (place.workspace / "inside.txt").read_text() == "x\n"
    still_works(run)


def test_home_and_dotenv_files_are_hidden(run: Run, place: Place) -> None:
    read = (f"cat {place.home}/.ssh/id_rsa; ls -a {place.home}; cat {place.project}/.env; "
            f"cat {place.outside}/.env; ls ~/.ssh")
    result = run(read)
    assert place.ssh_key not in result.output and place.dotenv_secret not in result.output
    assert ".ssh" not in result.output.split("No such file")[0].split()  # `ls -a` of home
    control = LocalShell(dict(os.environ), timeout_s=30).run(read, place.workspace)
    assert place.ssh_key in control.output and place.dotenv_secret in control.output
    still_works(run)


def test_environment_is_scrubbed(run: Run, place: Place, monkeypatch: pytest.MonkeyPatch
                                 ) -> None:
    secrets = {
        "OPENAI_API_KEY": "sk-test-openai-0123456789",
        "AWS_SECRET_ACCESS_KEY": "aws-test-secret-0123456789",
        "GITHUB_TOKEN": "ghp_test0123456789",
        "CUDAOPT_API_KEY": "cudaopt-test-key-0123456789",
        "MY_PROVIDER_CREDENTIAL_X": place.dotenv_secret,  # as if loaded from .env
        "HF_HOME_PASSWORD": "hunter2-hunter2",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("CUDAOPT_PROXY", "https://user:sk-test-openai-0123456789@proxy")
    monkeypatch.setenv("CUDA_DOTENV_SET", "1")  # allowed prefix, but set by a .env file
    monkeypatch.setenv("CUDAOPT_DEVICE", "cpu")
    result = run("env; cat /proc/self/environ | tr '\\0' '\\n'")
    for value in secrets.values():
        assert value not in result.output
    assert "CUDAOPT_PROXY" not in result.output and "CUDA_DOTENV_SET" not in result.output
    assert "CUDAOPT_DEVICE=cpu" in result.output and "PATH=" in result.output
    assert f"HOME={place.workspace}/.cudaopt/home" in result.output
    still_works(run)


def test_network_is_unreachable(run: Run) -> None:
    result = run("python -c \"import socket; socket.create_connection(('1.1.1.1', 53), 2)\"")
    assert result.exit_code != 0 and "Network is unreachable" in result.output, result.output
    still_works(run)


def test_process_storm_is_bounded(run: Run) -> None:
    marker = f"{61 + uuid.uuid4().int % 1000 / 1000:.3f}"  # a sleep duration nobody else uses
    storm = (f"python -c \"import subprocess\nfor _ in range(200): "
             f"subprocess.Popen(['sleep', '{marker}'])\"; sleep 5")
    result = run(storm, timeout_s=60, max_procs=40)
    assert "[sandbox] process limit" in result.output, result.output
    assert result.elapsed_s < 30
    assert alive(marker) == []
    still_works(run)


def test_workspace_size_is_bounded(run: Run, place: Place) -> None:
    big = run("head -c 3000000 /dev/zero > big.bin", workspace_mb=5, file_mb=2)
    assert "[sandbox] file size limit" in big.output, big.output
    assert (place.workspace / "big.bin").stat().st_size <= 2 << 20
    many = run("for i in 1 2 3 4; do head -c 1500000 /dev/zero > part$i.bin; done",
               workspace_mb=5, file_mb=2)
    assert "[sandbox] workspace size limit" in many.output, many.output
    cleaned = run("rm -f *.bin && echo cleaned", workspace_mb=5, file_mb=2)
    assert cleaned.output.strip() == "cleaned"  # back under the bound: no complaint
    still_works(run)


def test_memory_is_bounded_per_process(run: Run) -> None:
    result = run("python -c 'bytearray(3 * 10**9)'", memory_mb=512)
    assert result.exit_code != 0 and "[sandbox] memory limit" in result.output, result.output
    still_works(run)


def test_time_and_output_limits_kill_everything(run: Run) -> None:
    marker = f"{71 + uuid.uuid4().int % 1000 / 1000:.3f}"
    slow = run(f"sleep {marker} & sleep {marker}", timeout_s=1)
    assert slow.timed_out and slow.exit_code is None and alive(marker) == []
    loud = run("yes cudaopt", output_mb=1)
    assert "[sandbox] output limit" in loud.output and len(loud.output) < 6000
    left = run(f"(sleep {marker} &); echo detached")
    assert left.output.strip() == "detached" and alive(marker) == []  # did not outlive it
    still_works(run)
