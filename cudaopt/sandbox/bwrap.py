"""The bubblewrap command line around one shell command, and the probe that says whether
bwrap can create its namespaces on this machine.

What the command sees: the whole filesystem read-only; a fresh /dev with the GPU's device
nodes; its own /proc, /tmp (size-capped tmpfs) and /run (so no host daemon's socket, e.g.
docker.sock, can be reached: a read-only mount does not stop connecting to a socket); the
user's home replaced by an empty read-only tmpfs, with the Python environment and cudaopt's package
bound back read-only where they live under it; the workspace (and the folders the caller
names) read-write. New user, pid, network, ipc, uts and cgroup namespaces; no capabilities,
even as root (root inside keeps uid 0, so without `--cap-drop ALL` it could remount).
"""

from __future__ import annotations

import errno
import functools
import glob
import os
import shutil
import site
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from importlib.util import find_spec
from pathlib import Path

#: The checkout or install holding the `cudaopt` package (kept visible to confined
#: processes); found from this file, not by importing the package, which imports the judge.
ROOT = Path(__file__).resolve().parents[2]
PROBE_TIMEOUT_S = 15.0
#: a probe that fails for a passing reason (a timeout, see also `_PASSING`) is tried once
#: more with this longer limit before bwrap counts as unusable: a probe on a machine busy
#: starting a Ray cluster once refused a `bench --ray` that passed when run again
RETRY_TIMEOUT_S = 60.0
RETRY_PAUSE_S = 1.0
NAMESPACES = ["--unshare-all", "--unshare-user", "--die-with-parent", "--new-session",
              "--cap-drop", "ALL"]
INSTALL_HINT = ("install bubblewrap (Debian/Ubuntu: `sudo apt-get install bubblewrap`, "
                "Fedora/RHEL: `sudo dnf install bubblewrap`, Arch: `sudo pacman -S bubblewrap`)")


@dataclass(frozen=True)
class BwrapStatus:
    """Whether bwrap works here; `detail` is its version, or why it does not work."""

    ok: bool
    detail: str
    path: str | None = None
    options: frozenset[str] = frozenset()  # optional flags this bwrap knows
    passing: bool = False  # failed for a reason that may pass (a timeout under load)

    def hint(self) -> str:
        if self.path is None:
            return INSTALL_HINT
        if self.passing:
            return ("bwrap did not start in time even when tried again, or the machine was "
                    "short of processes or memory: run again when the machine is quieter")
        return ("bwrap is installed but cannot create namespaces: unprivileged user "
                "namespaces may be disabled (sysctl kernel.unprivileged_userns_clone=1, or "
                "an AppArmor/SELinux policy), or a container's seccomp profile blocks them")


def probe(timeouts_s: tuple[float, ...] = (PROBE_TIMEOUT_S, RETRY_TIMEOUT_S)) -> BwrapStatus:
    """Run bwrap with the flags every command will use (not cached: `cudaopt doctor`).

    A failure that says bwrap cannot work here (no namespaces allowed, bad flags) is the
    answer at once; one that may pass (a timeout under load, a fork refused for a moment)
    is tried again with the next, longer limit, so a busy machine is not told to opt out
    of its sandbox."""
    path = shutil.which("bwrap")
    if path is None:
        return BwrapStatus(False, "bwrap not found on PATH")
    for attempt, timeout_s in enumerate(timeouts_s):
        if attempt:
            time.sleep(RETRY_PAUSE_S)
        status = _probe_once(path, timeout_s)
        if status.ok or not status.passing:
            return status
    tried = ", ".join(f"{t:g} s" for t in timeouts_s)
    return replace(status, detail=f"{status.detail} (tried {len(timeouts_s)} times, with "
                                  f"limits of {tried})")


def _probe_once(path: str, timeout_s: float) -> BwrapStatus:
    try:
        options = _options(path, timeout_s)
        argv = [path, *NAMESPACES, *_hardening(options), "--ro-bind", "/", "/", "--dev",
                "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "true"]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        return BwrapStatus(False, f"bwrap did not answer within {timeout_s:g} s "
                                  f"(`bwrap {exc.cmd[1]} ...`)", path, passing=True)
    except OSError as exc:
        return BwrapStatus(False, f"bwrap did not run: {exc}", path,
                           passing=exc.errno in _PASSING)
    if done.returncode != 0:
        error = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        return BwrapStatus(False, f"bwrap cannot start a sandbox: {error}", path, options,
                           passing=any(text in error for text in _PASSING_TEXT))
    return BwrapStatus(True, _version(path), path, options)


#: errors that say "not now" rather than "not here": a fork or clone refused while the
#: machine is short of processes or memory for a moment
_PASSING = (errno.EAGAIN, errno.ENOMEM)
_PASSING_TEXT = tuple(os.strerror(code) for code in _PASSING)


@functools.cache
def cached_probe() -> BwrapStatus:
    """The probe, once per process: every shell command would otherwise pay for it."""
    return probe()


def _options(path: str, timeout_s: float) -> frozenset[str]:
    """Flags newer than the oldest bwrap in wide use (RHEL 8 ships 0.4): used if present.
    A `--help` that times out raises, so the probe is retried rather than run without the
    hardening the flags give."""
    try:
        text = subprocess.run([path, "--help"], capture_output=True, text=True,
                              timeout=timeout_s, stdin=subprocess.DEVNULL).stdout
    except OSError:
        return frozenset()
    return frozenset(flag for flag in ("--disable-userns", "--size") if flag in text)


def _version(path: str) -> str:
    try:
        return subprocess.run([path, "--version"], capture_output=True, text=True,
                              timeout=PROBE_TIMEOUT_S).stdout.strip() or "bwrap"
    except (OSError, subprocess.TimeoutExpired):
        return "bwrap"


def _hardening(options: frozenset[str]) -> list[str]:
    """No nested user namespaces: a fresh one would give the command capabilities again."""
    return ["--disable-userns"] if "--disable-userns" in options else []


def bwrap_argv(status: BwrapStatus, workspace: Path, readable: Iterable[Path],
               writable: Iterable[Path], locked: Iterable[Path], masked: Iterable[Path],
               tmp_mb: int, env: dict[str, str]) -> list[str]:
    """bwrap and its options, up to (not including) the command to run. `locked` paths
    inside writable folders stay read-only (and cannot be removed: they are mount points);
    `masked` files (the `.env` files cudaopt read) show as empty wherever they are."""
    homes = _home_forms()
    argv = [status.path or "bwrap", *NAMESPACES, *_hardening(status.options),
            "--ro-bind", "/", "/", "--dev", "/dev", *_gpu_devices(), "--proc", "/proc",
            "--tmpfs", "/run"]
    if "--size" in status.options:
        argv += ["--size", str(tmp_mb << 20)]
    argv += ["--tmpfs", "/tmp"]
    for home in homes:
        argv += ["--tmpfs", str(home)]
    for path in _outermost(_rebound(_needed_paths(readable, env), homes)):
        argv += ["--ro-bind", str(path), str(path)]
    for path in _outermost([workspace, *writable]):
        argv += ["--bind", str(path), str(path)]
    for path in locked:
        if path.exists():
            argv += ["--ro-bind", str(path), str(path)]
    for path in masked:
        if path.is_file():
            argv += ["--ro-bind", "/dev/null", str(path)]
    for folder in ["/run", *map(str, homes)]:  # a write there fails loudly, not into a tmpfs
        argv += ["--remount-ro", folder]
    return [*argv, "--chdir", str(workspace)]


def _home_forms() -> list[Path]:
    """The user's home as given and as resolved (a tmpfs hides both); none if it is `/`."""
    home = os.environ.get("HOME")
    if not home or not Path(home).is_dir() or Path(home).resolve() == Path("/"):
        return []
    return sorted({Path(os.path.abspath(home)), Path(home).resolve()})


def _gpu_devices() -> list[str]:
    """GPU device nodes (NVIDIA's, DRM's) bound into the fresh /dev so kernels still run."""
    argv: list[str] = []
    for node in sorted(glob.glob("/dev/nvidia*")) + sorted(glob.glob("/dev/dri")):
        argv += ["--dev-bind", node, node]
    return argv


def _needed_paths(readable: Iterable[Path], env: dict[str, str]) -> list[Path]:
    """What Python, torch and cudaopt need to run: interpreter, prefixes, sys.path, site
    folders, editable checkouts of torch/triton, cudaopt's package root, library and CUDA
    folders named by the environment, and the caller's extra folders."""
    found = [Path(sys.executable).parent, Path(sys.prefix), Path(sys.base_prefix),
             Path(sys.exec_prefix), ROOT, *map(Path, site.getsitepackages()),
             Path(site.getusersitepackages()), *readable]
    found += [Path(p) for p in sys.path if p and os.path.isabs(p)]
    found += [d for d in map(_package_dir, ("torch", "triton")) if d is not None]
    for var in ("PYTHONPATH", "LD_LIBRARY_PATH"):
        found += [Path(p) for p in env.get(var, "").split(os.pathsep) if os.path.isabs(p)]
    found += [Path(env[var]) for var in ("CUDA_HOME", "CUDA_PATH", "VIRTUAL_ENV") if env.get(var)]
    return sorted({form for path in found if path.exists()
                   for form in (Path(os.path.abspath(path)), path.resolve())})


def _package_dir(name: str) -> Path | None:
    """Where a package lives, found without importing it (an editable checkout may sit in
    the home, outside every site folder)."""
    try:
        spec = find_spec(name)
    except (ImportError, ValueError):
        return None
    return Path(spec.origin).parent if spec is not None and spec.origin else None


def _rebound(paths: list[Path], homes: list[Path]) -> list[Path]:
    """Paths a tmpfs hides and that must come back. Never a hidden folder itself or one
    above it (a `python -m` started in the home puts the home on sys.path)."""
    hidden = [Path("/tmp"), Path("/run"), *homes]
    return [p for p in paths if any(p.is_relative_to(root) for root in hidden)
            and not any(root.is_relative_to(p) for root in hidden)]


def _outermost(paths: Iterable[Path]) -> list[Path]:
    """Sorted, without paths inside another one of them (bound already with it)."""
    kept: list[Path] = []
    for path in sorted(set(paths)):
        if not any(path.is_relative_to(outer) for outer in kept):
            kept.append(path)
    return kept
