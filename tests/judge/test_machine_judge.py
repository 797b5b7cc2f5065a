"""The machine judge: `cudaopt check` starts it on demand and later checks of the same task
reuse its loaded workers; killed mid-judgement, the check is judged in its own process and
the next check starts a new one. Real processes: the CLI, the daemon, its workers."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from cudaopt.judge.serving import machine_client
from cudaopt.judge.serving.machine import private_folder
from cudaopt.judge.workers.quiet import family
from tests.procs import processes

ZOO = Path(__file__).resolve().parent / "zoo"


@pytest.fixture
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A check's environment with the machine judge on, its socket in a folder of the
    test's own; the judge it started is stopped afterwards."""
    env = {**os.environ, "CUDAOPT_WARM_JUDGE": "1", "TMPDIR": str(tmp_path),
           "CUDAOPT_WARM_IDLE_S": "120"}
    yield env
    stop_judges(tmp_path)


def stop_judges(tmp_path: Path) -> None:
    """Stop the machine judges a test started under `tmp_path` and remove their folder
    where it lies outside `tmp_path` (a deep TMPDIR's, under /tmp): pytest removes only
    its own folders."""
    for pid in judges(tmp_path):
        os.killpg(pid, signal.SIGKILL)
    folder = judge_folder(tmp_path)
    if not folder.is_relative_to(tmp_path):
        shutil.rmtree(folder, ignore_errors=True)


def judge_folder(tmp_path: Path) -> Path:
    """Where a process whose TMPDIR is `tmp_path` keeps its machine judge's socket and log
    (directly under /tmp where `tmp_path` is too deep for a socket path)."""
    before = tempfile.tempdir
    tempfile.tempdir = str(tmp_path)
    try:
        return private_folder()
    finally:
        tempfile.tempdir = before


def judges(tmp_path: Path) -> list[int]:
    """The machine judges started under this test's temporary folder."""
    return processes("cudaopt.judge.serving.machine_main", str(judge_folder(tmp_path)))


def _check(env: dict[str, str], out: Path, *extra: str, wait: bool = True,
           task: Path = ZOO / "task.py",
           python: tuple[str, ...] = ()) -> subprocess.Popen[str] | dict:
    argv = [sys.executable, *python, "-m", "cudaopt.cli", "check", str(task),
            str(ZOO / "correct.py"), "--device", "cpu", "--json", str(out), "--trace", *extra]
    proc = subprocess.Popen(argv, env=env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    if not wait:
        return proc
    output = proc.communicate(timeout=900)[0]
    assert proc.returncode == 0, output
    return {"verdict": json.loads(out.read_text()), "output": output}


def test_a_second_check_of_the_task_starts_no_reference_or_baseline(
        env: dict[str, str], tmp_path: Path) -> None:
    first = _check(env, tmp_path / "1.json")
    assert "starting the warm judge" in first["output"]
    second = _check(env, tmp_path / "2.json")
    assert "starting the warm judge" not in second["output"]
    assert any(k.startswith("load.reference") for k in first["verdict"]["phases_s"])
    assert not any(k.startswith("load.reference") for k in second["verdict"]["phases_s"])
    assert "kept warm from an earlier judgement" in second["output"]
    assert len(judges(tmp_path)) == 1


def test_a_temporary_folder_too_deep_for_a_socket_still_gets_a_warm_judge(
        env: dict[str, str], tmp_path: Path) -> None:
    """A socket's path holds 107 bytes: under a deep TMPDIR (pytest-xdist's, a batch job's)
    the judge could not bind, and every check started cold. It now lives under /tmp, in a
    folder of that TMPDIR's own."""
    deep = tmp_path / ("deep-" * 16)
    deep.mkdir()
    env = {**env, "TMPDIR": str(deep)}
    assert not str(judge_folder(deep)).startswith(str(deep))
    try:
        _check(env, tmp_path / "1.json")
        second = _check(env, tmp_path / "2.json")
        assert not any(k.startswith("load.reference") for k in second["verdict"]["phases_s"])
        assert len(judges(deep)) == 1
    finally:
        stop_judges(deep)


def test_another_task_finds_its_processes_born_warm_and_the_client_never_imports_torch(
        env: dict[str, str], tmp_path: Path) -> None:
    """After a judgement the machine judge starts the next task's reference and baseline
    processes: a check of a new task finds them past their imports (part of their start-up
    lay before it). The check's own process, answered by the warm judge, imports no torch."""
    _check(env, tmp_path / "1.json")
    other = tmp_path / "other" / "task.py"
    other.parent.mkdir()
    other.write_text((ZOO / "task.py").read_text() + "\n# another task, by content\n")
    second = _check(env, tmp_path / "2.json", task=other, python=("-X", "importtime"))
    phases = second["verdict"]["phases_s"]
    assert "starting the warm judge" not in second["output"]
    for worker in ("load.reference", "baselines"):
        assert phases[f"{worker}.boot_waited"] < phases[f"{worker}.boot"], (worker, phases)
    imported = [line.rsplit("|", 1)[-1].strip() for line in second["output"].splitlines()
                if line.startswith("import time:")]
    assert "cudaopt.cli" in imported and "torch" not in imported


def test_a_judge_killed_mid_judgement_costs_only_that_judgement_its_warmth(
        env: dict[str, str], tmp_path: Path) -> None:
    _check(env, tmp_path / "1.json", "--no-profile")
    (judge,) = judges(tmp_path)
    running = _check(env, tmp_path / "2.json", wait=False)
    seen = []
    for line in running.stdout:  # inside the judgement: the warm judge is verifying
        seen.append(line)
        if "verifying" in line:
            break
    os.killpg(judge, signal.SIGKILL)
    output = "".join(seen) + running.communicate(timeout=900)[0]
    assert running.returncode == 0, output
    assert "the warm judge stopped in the middle of this judgement" in output
    assert json.loads((tmp_path / "2.json").read_text())["correct"]
    third = _check(env, tmp_path / "3.json", "--no-profile")
    assert "starting the warm judge" in third["output"] and third["verdict"]["correct"]


def test_turned_off_every_check_judges_in_its_own_process(env: dict[str, str],
                                                          tmp_path: Path) -> None:
    env["CUDAOPT_WARM_JUDGE"] = "0"
    _check(env, tmp_path / "1.json", "--no-profile")
    assert not judges(tmp_path)


def test_an_edited_cudaopt_gets_a_judge_of_its_own(tmp_path: Path) -> None:
    """A judge started before an upgrade or an edit would judge with the old code: the
    socket's name digests the package's files, so any change to one names another judge."""
    copy = tmp_path / "site" / "cudaopt"
    shutil.copytree(Path(__file__).resolve().parents[2] / "cudaopt", copy,
                    ignore=shutil.ignore_patterns("__pycache__"))
    script = "from cudaopt.judge.serving.machine import address; print(address({}))"
    env = {**os.environ, "PYTHONPATH": str(copy.parent), "PYTHONDONTWRITEBYTECODE": "1"}

    def socket_name() -> str:
        return subprocess.run([sys.executable, "-c", script], env=env, check=True,
                              capture_output=True, text=True, cwd=tmp_path).stdout
    before = socket_name()
    assert socket_name() == before
    edited = copy / "judge" / "checks" / "verify.py"
    os.utime(edited, ns=(edited.stat().st_atime_ns, edited.stat().st_mtime_ns + 10**9))
    assert socket_name() != before


def test_the_judge_is_no_descendant_of_the_process_that_started_it(tmp_path: Path) -> None:
    """A bench slot or an agent run that starts the machine judge (by lending it a pair)
    times its own judgements while the judge starts: a descendant's CPU counts as the
    judgement's own work, so the judge must not be one, or that load goes unseen."""
    path = tmp_path / "judge.sock"
    conn = machine_client._start(path, lambda _: None)
    try:
        assert conn is not None, (path.with_suffix(".log").read_text()
                                  if path.with_suffix(".log").exists() else "no log")
        conn.close()
        started = processes(machine_client.MAIN, str(path))
        assert len(started) == 1
        assert started[0] not in family([os.getpid()])
    finally:
        for pid in processes(machine_client.MAIN, str(path)):
            os.killpg(pid, signal.SIGKILL)
