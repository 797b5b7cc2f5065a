"""The run's warm judge, shared by the loop and the workspace's judge commands: the server
on the socket is handed the loop's own judgement when it is made (docs/agent.md draws the
round trip)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from cudaopt.agent.best import BestTracker
from cudaopt.agent.config import RunConfig
from cudaopt.agent.environment.layout import READ_ONLY
from cudaopt.judge import (
    JudgeOptions,
    JudgePool,
    JudgeServer,
    Verdict,
    check,
    gpu_identity,
    machine_lender,
    prepare,
    worker_env,
)


class JudgeService:
    """The run's warm judge: one pool of workers for the loop's own judgements (through
    `tracker`) and, through a socket, for `cudaopt verify` / `profile` in the workspace. With
    a sandbox, the candidate worker (which imports model-written code) runs inside it too."""

    def __init__(self, run_dir: Path, config: RunConfig, task: Path,
                 progress: Callable[[str], None] | None = None):
        workspace = run_dir / "workspace"
        options = config.judge_options()
        env = worker_env(options)
        if config.gpu is not None:
            env["CUDA_VISIBLE_DEVICES"] = gpu_identity(config.gpu)
        self.pool = JudgePool(env, wrapper=_wrapper(run_dir, config), confined=config.confined)
        self.pool.lender = machine_lender()  # the task's pair outlives the run
        if config.judge_lock is not None:
            self.pool.lock = config.judge_lock
        self.tracker = BestTracker(task, run_dir, options, progress=progress,
                                   stage_dir=config.stage_dir, pool=self.pool)
        self.server = JudgeServer(None, self.pool, workspace, options, judge=self._judge)
        self.socket_path = self.server.socket_path
        self.server.start()
        # the baselines compile while the model writes its first kernel and that builds
        prepare(task, options, self.pool)

    def _judge(self, task: Path, candidate: Path, options: JudgeOptions,
               progress: Callable[[str], None]) -> Verdict:
        """A workspace command asking for the loop's own judgement gets it from the tracker
        (trusted, not judged again when its record claims a best); others are judged in
        place with their own settings."""
        found = self.tracker.judge_for_shell(task, candidate, options, progress)
        return found if found is not None else check(task, candidate, options, progress,
                                                     pool=self.pool)

    def __enter__(self) -> JudgeService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.server.close()
        self.pool.close()


def _wrapper(run_dir: Path,
             config: RunConfig) -> Callable[..., tuple[list[str], dict[str, str]]] | None:
    """With a sandbox, each judge worker starts inside it, seeing the run folder read-only."""
    if config.sandbox is None:
        return None
    box = config.sandbox.with_paths([run_dir], [], READ_ONLY)
    workspace = run_dir / "workspace"

    def wrapper(argv: list[str], env: dict[str, str],
                writable: list[Path]) -> tuple[list[str], dict[str, str]]:
        return box.wrap_process(argv, env, workspace, writable)

    return wrapper
