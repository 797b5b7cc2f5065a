"""The probe that decides whether a command may start with its sandbox, against a `bwrap` on
PATH that behaves as a real one does where it cannot work (Docker's default profile) and as
one stalled by a busy machine: a real failure refuses at once with its reason, a timeout is
tried again with a longer limit before anything is refused."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cudaopt.sandbox import SandboxUnavailable, bwrap, resolve_sandbox
from cudaopt.sandbox.bwrap import cached_probe

#: what bwrap prints where user namespaces are refused (Docker's default seccomp profile,
#: a kernel without unprivileged user namespaces)
REFUSALS = ("bwrap: No permissions to creating new namespace, likely because the kernel does "
            "not allow non-privileged user namespaces",
            "bwrap: Creating new namespace failed: Operation not permitted")


def fake_bwrap(folder: Path, monkeypatch: pytest.MonkeyPatch, probe_body: str) -> Path:
    """A `bwrap` first on PATH: answers `--help` and `--version` as bwrap 0.8 does, runs
    `probe_body` for anything else, and counts those runs in `folder/probes`."""
    script = folder / "bwrap"
    script.write_text(
        "#!/bin/sh\n"
        'case "$1" in\n'
        '  --help) echo "usage: bwrap [OPTIONS...] [--] COMMAND [ARGS...]"; '
        'echo "    --disable-userns"; echo "    --size BYTES"; exit 0;;\n'
        '  --version) echo "bubblewrap 0.8.0"; exit 0;;\n'
        "esac\n"
        f'echo probe >> "{folder}/probes"\n'
        f"{probe_body}\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:/usr/bin:/bin")
    return folder / "probes"


def runs(probes: Path) -> int:
    return len(probes.read_text().splitlines()) if probes.exists() else 0


@pytest.mark.parametrize("refusal", REFUSALS)
def test_a_bwrap_that_cannot_create_namespaces_refuses_at_once(
        refusal: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    probes = fake_bwrap(tmp_path, monkeypatch, f"echo '{refusal}' >&2; exit 1")
    status = bwrap.probe()
    assert not status.ok and not status.passing and runs(probes) == 1  # no retry
    assert refusal in status.detail and "namespaces" in status.hint()
    monkeypatch.setattr("cudaopt.sandbox.cached_probe", bwrap.probe)
    with pytest.raises(SandboxUnavailable) as caught:
        resolve_sandbox("auto")
    assert refusal in str(caught.value) and "--sandbox none" in str(caught.value)


def test_a_probe_that_times_out_is_tried_again_with_a_longer_limit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first probe stalls past its limit, as on a machine busy starting a Ray cluster;
    the second answers. Where a working bwrap is installed, the second is the real one."""
    real = shutil.which("bwrap") if cached_probe().ok else None
    answer = f'exec {real} "$@"' if real else "exit 0"
    probes = fake_bwrap(tmp_path, monkeypatch,
                        f'[ "$(wc -l < "{tmp_path}/probes")" -gt 1 ] || exec sleep 30\n{answer}')
    status = bwrap.probe(timeouts_s=(0.5, 20.0))
    assert status.ok, status.detail
    assert runs(probes) == 2 and status.options == {"--disable-userns", "--size"}


def test_a_probe_that_never_answers_refuses_with_what_it_tried(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    probes = fake_bwrap(tmp_path, monkeypatch, "exec sleep 30")
    status = bwrap.probe(timeouts_s=(0.3, 0.6))
    assert not status.ok and status.passing and runs(probes) == 2
    assert "did not answer within 0.6 s" in status.detail
    assert "tried 2 times, with limits of 0.3 s, 0.6 s" in status.detail
    assert "quieter" in status.hint()


def test_a_fork_refused_for_a_moment_is_tried_again(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    probes = fake_bwrap(tmp_path, monkeypatch,
                        f'[ "$(wc -l < "{tmp_path}/probes")" -gt 1 ] && exit 0\n'
                        "echo 'bwrap: Creating new namespace failed: Resource temporarily "
                        "unavailable' >&2; exit 1")
    assert bwrap.probe(timeouts_s=(5.0, 5.0)).ok and runs(probes) == 2
