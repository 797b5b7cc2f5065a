"""The candidate's worker in namespaces of its own, in every mode, standalone `check` included.

Without them the candidate runs as the user, beside the judge's other processes: it can
re-pin or renice the reference and baseline workers (same user, PIDs in plain sight),
rewrite torch.compile's cache that the baselines load on their next start (inductor
imports a cached wrapper without checking it), and leave a `setsid` grandchild behind that
slows every later judgement. In bubblewrap's namespaces it cannot: its own PID namespace
(it sees and signals only its own processes, and when the worker goes, the kernel ends
every process left in it), its own user, network and UTS namespaces, the whole filesystem
read-only but for the judgement's scratch folder, and caches of its own there.

The IPC namespace stays shared: CUDA's inter-process memory handles pass the outputs to the
reference worker without a copy. Where bwrap cannot run here, the verdict says so and earns
no speed milestone unless the user accepts that (`JudgeOptions.allow_unisolated`); a run
whose own sandbox already confines the candidate (`optimize`'s) needs nothing more.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cudaopt.judge.workers.child import Worker

#: Confines the candidate worker, e.g. in the run's sandbox: gets its argv, environment and
#: the folders it must be able to write; returns the argv and environment to run with.
Wrapper = Callable[[list[str], dict[str, str], list[Path]], tuple[list[str], dict[str, str]]]

#: The candidate's own caches and temporary files, in its own folder: torch.compile's,
#: Triton's and the CUDA driver's caches, never the ones the baselines load. (The
#: system's /tmp stays visible, read-only: the candidate's own files may be there.)
PRIVATE_CACHES = {"TORCHINDUCTOR_CACHE_DIR": "inductor", "TRITON_CACHE_DIR": "triton",
                  "TRITON_HOME": "triton-home", "CUDA_CACHE_PATH": "nv", "XDG_CACHE_HOME": "xdg",
                  "TMPDIR": "tmp"}
NAMESPACES = ["--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-uts",
              "--unshare-cgroup-try", "--die-with-parent", "--cap-drop", "ALL"]


@dataclass(frozen=True)
class Isolation:
    """How a pool confines its candidate workers; `isolated` False earns no speed milestone
    unless the user accepts it."""

    isolated: bool
    how: str

    @classmethod
    def probe(cls) -> Isolation:
        from cudaopt.sandbox.bwrap import cached_probe

        status = cached_probe()
        if status.ok:
            return cls(True, "own PID, user and network namespaces (bubblewrap), filesystem "
                             "read-only but its scratch folder, caches of its own")
        return cls(False, f"none: {status.detail}; {status.hint()}")


SANDBOXED = Isolation(True, "the run's sandbox")


def candidate_worker(log: Path, env: dict[str, str], scratch: Path, wrapper: Wrapper | None,
                     isolated: bool) -> Worker:
    """A new candidate process, writing only to `scratch`: inside `wrapper` (a run's
    sandbox) where given, then in namespaces of its own (`confine`) where `isolated`.
    Either way its Triton cache is not the one the baselines load."""
    own = scratch / log.stem
    placed: dict[str, Path] = {}

    def wrap(argv: list[str], env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
        if wrapper is not None:
            argv, env = wrapper(argv, env, [scratch])
        if not isolated:
            triton = Path(env["TRITON_CACHE_DIR"]).parent / "triton-candidates" / "shared"
            return argv, {**env, "TRITON_CACHE_DIR": str(triton)}
        placed["builds"] = Path(env["TORCH_EXTENSIONS_DIR"])
        placed["triton"] = Path(env["TRITON_CACHE_DIR"]).parent / "triton-candidates"
        return confine(argv, env, [scratch], own)

    worker = Worker("candidate", log, env, wrap=wrap)
    if placed:
        worker.caches = {"builds": (placed["builds"], own / "builds"),
                         "triton": (placed["triton"], own / "cache" / "triton")}
    return worker


def confine(argv: list[str], env: dict[str, str], writable: list[Path],
            own: Path) -> tuple[list[str], dict[str, str]]:
    """`argv` inside bwrap, writing only to `writable` and to `own`, the worker's folder,
    which holds its caches and, mounted where the judge's `load_inline` builds live
    (`TORCH_EXTENSIONS_DIR`, at the same path so a build copied in is current), its own
    builds: the judge copies a build of the candidate's content in before it imports and
    back after (`extdir.seed_build`, `extdir.keep_build`), and no other build is visible."""
    from cudaopt.sandbox.bwrap import cached_probe

    status = cached_probe()
    env = dict(env)
    for name, folder in PRIVATE_CACHES.items():
        (own / "cache" / folder).mkdir(parents=True, exist_ok=True)
        env[name] = str(own / "cache" / folder)
    builds = Path(env["TORCH_EXTENSIONS_DIR"]).resolve()
    builds.mkdir(parents=True, exist_ok=True)  # the mount point
    (own / "builds").mkdir(parents=True, exist_ok=True)
    hardening = ["--disable-userns"] if "--disable-userns" in status.options else []
    box = [status.path or "bwrap", *NAMESPACES, *hardening, "--ro-bind", "/", "/",
           "--dev", "/dev", *_gpu_nodes(), "--proc", "/proc"]
    for mount in sorted({path.resolve() for path in [*writable, own]}):
        box += ["--bind", str(mount), str(mount)]
    box += ["--bind", str((own / "builds").resolve()), str(builds)]
    return [*box, "--chdir", str(own.resolve()), "--", *argv], env


def _gpu_nodes() -> list[str]:
    """The GPU's device nodes, into the fresh /dev, so kernels still run."""
    nodes = sorted(glob.glob("/dev/nvidia*")) + sorted(glob.glob("/dev/dri"))
    return [arg for node in nodes if os.path.exists(node)
            for arg in ("--dev-bind", node, node)]
