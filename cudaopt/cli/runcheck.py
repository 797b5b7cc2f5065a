"""What `cudaopt optimize` checks before the first model call: the device, the repository
an accepted kernel will be committed to, and the task itself, loaded and run once on the
device the way the judge runs it. A run that cannot succeed stops here, in seconds, with a
message saying what to do, instead of after a paid agent session."""

from __future__ import annotations

from pathlib import Path

from cudaopt.agent.environment import layout
from cudaopt.agent.policy.model import REPLAY_PREFIX
from cudaopt.agent.policy.replay import recorded_device
from cudaopt.judge import JudgeOptions, Status, Verdict, check_task
from cudaopt.runs import gitops
from cudaopt.runs.folder import RunMeta


class NotReady(Exception):
    """The run cannot start; the message is for the user (the CLI exits 2)."""


def resolve_device(requested: str) -> tuple[str, str]:
    """(kind for the workspace: cuda|cpu, device for the judge), "auto" resolved."""
    import torch

    device = requested
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise NotReady(f"--device {device}: no CUDA device here (torch {torch.__version__} "
                       "sees none; check nvidia-smi); use --device cpu")
    return ("cuda" if device.startswith("cuda") else "cpu"), device


def check_backend(backend: str, kind: str, before: RunMeta | None) -> None:
    """Triton needs a GPU; a resumed run keeps the language its workspace was laid out
    for (its skill and starter are written once)."""
    started = before.extra.get("backend", "cuda") if before else backend
    if started != backend:
        raise NotReady(f"this run writes {started} kernels (its workspace and skill were laid "
                       f"out for them): resume it without --backend {backend}, or start a new "
                       "run")
    try:
        layout.check_backend(backend, kind)
    except layout.BackendError as exc:
        raise NotReady(f"--backend {backend}: {exc}") from exc


def check_replay(model: str, kind: str) -> None:
    """A CUDA session replayed on the CPU writes `.cu` files nothing can build."""
    if not model.startswith(REPLAY_PREFIX):
        return
    path = Path(model[len(REPLAY_PREFIX):]).expanduser()
    recorded = recorded_device(path)
    if recorded == "cuda" and kind != "cuda":
        raise NotReady(f"{path} replays a session recorded on CUDA, and this run is on "
                       f"{kind}: no CUDA device here. Replay a CPU recording with --device cpu "
                       "(examples/replay/prefix_sum_cpu.jsonl), or run on a GPU machine.")


def check_repository(task: Path, commit: bool, init_repo: bool, branch: str | None) -> None:
    """An accepted kernel must have a branch to land on; --init-repo makes one at the end."""
    if not commit:
        return
    try:
        gitops.ready_to_commit(task, branch, init=init_repo)
    except gitops.NotARepoError as exc:
        raise NotReady(str(exc)) from exc
    except gitops.GitOpsError as exc:
        raise NotReady(f"--branch: {exc}") from exc


def check_runnable_task(task: Path, options: JudgeOptions) -> Verdict:
    """The task loaded and its `Model` run once on the device, by the judge's own worker."""
    verdict = check_task(task, options)
    if verdict.status is not Status.OK:
        raise NotReady(verdict.error.rstrip())
    return verdict
