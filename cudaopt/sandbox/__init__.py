"""The agent's shell in a sandbox: a model with a shell on the user's GPU box must not be
able to harm the machine or leak the user's secrets.

`resolve_sandbox(mode)` turns `--sandbox auto|bwrap|none` into a `Sandbox`; the agent's
`bash` tool hands every command to `Sandbox.run`, which returns the same `ShellResult` as
the unsandboxed shell. With bwrap (see `cudaopt.sandbox.bwrap` for the mounts):

- holds for everyone: read-only filesystem except the workspace (its task and skills
  locked read-only), the folders the run names and a private size-capped /tmp; no
  network; home hidden except the Python environment; `.env` files read as empty; host
  daemons' sockets under /run unreachable; environment built from an allow-list with
  credentials removed; build caches and HOME inside the workspace; time limit, output
  cap, per-file size limit, per-process data-memory limit, a workspace size check after
  each command; nothing started survives the command.
- process count: kernel-enforced (RLIMIT_NPROC in the sandbox's user namespace, threads
  included) for a normal user. As root the kernel ignores RLIMIT_NPROC, so `command`
  polls the sandbox's pid namespace every 50 ms and kills it over the limit: a fork storm
  may overshoot by what it starts in one poll.
- as root, root-owned files outside the home that only their owner may read (e.g.
  /etc/shadow) stay readable: uid 0 inside maps to uid 0 outside, and it is the owner.
  Run cudaopt as a normal user for full confinement.

`--sandbox none` keeps the limits that need no namespaces (time, output, file size,
memory, workspace size, scrubbed environment) and drops the rest; it prints a warning.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from cudaopt.sandbox.bwrap import BwrapStatus, bwrap_argv, cached_probe
from cudaopt.sandbox.command import run_command
from cudaopt.sandbox.limits import (
    MiB,
    ProcessCounter,
    SandboxLimits,
    limit_notes,
    size_note,
    ulimit_prefix,
)
from cudaopt.sandbox.secrets import dotenv_values, scrub_env

__all__ = ["MODES", "NONE_WARNING", "Sandbox", "SandboxLimits", "SandboxUnavailable",
           "ShellResult", "resolve_sandbox"]


@dataclass
class ShellResult:
    """One shell command's outcome, sandboxed or not (the agent's `bash` tool shows it)."""

    exit_code: int | None  # None when the command was killed at its time limit
    output: str  # stdout and stderr interleaved, already truncated
    elapsed_s: float
    timed_out: bool = False

MODES = ("auto", "bwrap", "none")
NONE_WARNING = ("warning: --sandbox none: the model's shell commands run unconfined, as you: "
                "they can read your files and home directory, write anywhere you can, and "
                "reach the network. Only the time, output, memory and file-size limits and "
                "the scrubbed environment remain.")


#: What the judge's worker protocol needs from its environment (never a credential).
KEEP_FOR_WORKERS = ("CUDAOPT_REPLY_FD", "PYTHONUNBUFFERED", "PYTHONPATH")


class SandboxUnavailable(RuntimeError):
    """The requested sandbox cannot run here; the message names the fix."""


@dataclass(frozen=True)
class Sandbox:
    """How the agent's shell commands run. `kind` is "bwrap" or "none"."""

    kind: str
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    readable: tuple[Path, ...] = ()  # extra folders to keep visible (read-only)
    writable: tuple[Path, ...] = ()  # extra folders to keep writable, size-checked
    locked: tuple[str, ...] = ()  # workspace entries kept read-only (the task, the skills)
    dotenv_dirs: tuple[Path, ...] = ()  # folders whose `.env` cudaopt loaded
    status: BwrapStatus | None = None

    @property
    def warning(self) -> str | None:
        return NONE_WARNING if self.kind == "none" else None

    def with_paths(self, readable: Iterable[Path] = (), writable: Iterable[Path] = (),
                   locked: Iterable[str] = ()) -> Sandbox:
        """This sandbox with more folders visible (e.g. the run's bin/), writable (e.g. the
        run's candidate records) or locked inside the workspace (e.g. model.py)."""
        return replace(self, readable=(*self.readable, *readable),
                       writable=(*self.writable, *writable), locked=(*self.locked, *locked))

    def run(self, command: str, workspace: Path, env: Mapping[str, str], timeout_s: float,
            output_limit_chars: int = 12_000) -> ShellResult:
        """Run `bash -c command` in `workspace`; every bound hit is reported in the output."""
        workspace = workspace.resolve()
        writable = [path.resolve() for path in self.writable]
        for path in writable:
            path.mkdir(parents=True, exist_ok=True)
        child_env = self.environment(env, workspace)
        as_root = os.geteuid() == 0
        kernel_nproc = self.kind == "bwrap" and not as_root
        limits = ulimit_prefix(self.limits, count_procs=kernel_nproc)
        argv = ["bash", "-c", f'{limits} && exec bash -c "$1"', "cudaopt-sandbox", command]
        watch = None
        if self.kind == "bwrap":
            assert self.status is not None
            masked = [folder / ".env" for folder in self.dotenv_dirs]
            locked = [workspace / name for name in self.locked]
            argv = [*bwrap_argv(self.status, workspace, self.readable, writable, locked,
                                masked, self.limits.tmp_mb, child_env), "--", *argv]
            if as_root:
                def watch(pid: int) -> ProcessCounter:
                    return ProcessCounter(pid, self.limits.max_procs)
        outcome = run_command(argv, workspace, child_env, timeout_s, output_limit_chars,
                              self.limits.output_mb * MiB, watch)
        notes = limit_notes(outcome.output, outcome.exit_code, self.limits, kernel_nproc)
        notes += _kill_notes(outcome.killed_for, self.limits)
        size = size_note([workspace, *writable], self.limits)
        notes += [size] if size else []
        output = outcome.output + "".join(f"\n[sandbox] {note}" for note in notes)
        return ShellResult(outcome.exit_code, output, outcome.elapsed_s, outcome.timed_out)

    def wrap_process(self, argv: list[str], env: Mapping[str, str], workspace: Path,
                     writable: Iterable[Path] = ()) -> tuple[list[str], dict[str, str]]:
        """Confine a long-lived process the way a shell command is confined (mounts and
        scrubbed environment): the judge's candidate worker, which imports model-written
        code. Its time limit and killing stay with the caller; `KEEP_FOR_WORKERS` passes."""
        workspace = workspace.resolve()
        extra = [path.resolve() for path in (*self.writable, *writable)]
        child_env = self.environment(env, workspace)
        child_env.update({k: env[k] for k in KEEP_FOR_WORKERS if k in env})
        if self.kind != "bwrap":
            return argv, child_env
        assert self.status is not None
        masked = [folder / ".env" for folder in self.dotenv_dirs]
        locked = [workspace / name for name in self.locked]
        prefix = bwrap_argv(self.status, workspace, self.readable, extra, locked, masked,
                            self.limits.tmp_mb, child_env)
        return [*prefix, "--", *argv], child_env

    def environment(self, env: Mapping[str, str], workspace: Path) -> dict[str, str]:
        """`env` scrubbed, with HOME and every build cache inside the workspace (writable,
        size-checked, and never shared with the user's own caches), and this Python first
        on PATH after the caller's own folders (a hidden home may hold pyenv's shims)."""
        scrubbed = scrub_env(env, dotenv_values(self.dotenv_dirs))
        state = workspace / ".cudaopt"
        cache = state / "cache"
        places = {"HOME": state / "home", "XDG_CACHE_HOME": cache,
                  "TORCH_EXTENSIONS_DIR": cache / "torch_extensions",
                  "TORCHINDUCTOR_CACHE_DIR": cache / "inductor",
                  "TRITON_CACHE_DIR": cache / "triton", "CUDA_CACHE_PATH": cache / "nv"}
        for name, path in places.items():
            path.mkdir(parents=True, exist_ok=True)
            scrubbed[name] = str(path)
        scrubbed["PATH"] = self._path(scrubbed.get("PATH", os.defpath))
        return scrubbed

    def _path(self, path: str) -> str:
        python = os.path.dirname(sys.executable)
        entries = [entry for entry in path.split(os.pathsep) if entry != python]
        own = {str(folder) for folder in self.readable}
        lead = 0
        while lead < len(entries) and entries[lead] in own:
            lead += 1
        return os.pathsep.join([*entries[:lead], python, *entries[lead:]])


def _kill_notes(killed_for: str | None, limits: SandboxLimits) -> list[str]:
    if killed_for == "output":
        return [f"output limit: the command printed more than {limits.output_mb} MB and was "
                "killed; redirect long output to a file and read the part you need."]
    if killed_for == "processes":
        return [f"process limit: the command started more than {limits.max_procs} "
                "processes and was killed with everything it started."]
    return []


def resolve_sandbox(mode: str, limits: SandboxLimits | None = None,
                    dotenv_dirs: Iterable[Path] = ()) -> Sandbox:
    """The sandbox for `--sandbox MODE`. "auto" and "bwrap" both need a working bwrap
    (probed once per process) and refuse to start without one: there is no silent
    fallback to an unconfined shell. "none" is the explicit opt-out (see `warning`)."""
    if mode not in MODES:
        raise ValueError(f"unknown sandbox mode {mode!r}: use one of {', '.join(MODES)}")
    made = Sandbox("none", limits or SandboxLimits(), dotenv_dirs=tuple(dotenv_dirs))
    if mode == "none":
        return made
    status = cached_probe()
    if not status.ok:
        raise SandboxUnavailable(
            f"the agent's shell runs in a bubblewrap sandbox (--sandbox {mode}), but "
            f"{status.detail}.\nFix: {status.hint()}.\nOr opt out with --sandbox none: the "
            "model's commands then run unconfined, with your files and the network.")
    return replace(made, kind="bwrap", status=status)
