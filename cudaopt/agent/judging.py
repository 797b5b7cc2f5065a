"""The run's warm judge, shared by the loop and the workspace's judge commands."""

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
    gpu_identity,
    worker_env,
)


class JudgeService:
    """The run's warm judge: one pool of workers for the loop's own judgements and, through a
    socket, for `cudaopt verify` / `profile` in the workspace. With a sandbox, the candidate
    worker (which imports model-written code) runs inside it too."""

    def __init__(self, run_dir: Path, config: RunConfig):
        workspace = run_dir / "workspace"
        wrapper = None
        if config.sandbox is not None:
            box = config.sandbox.with_paths([run_dir], [], READ_ONLY)

            def wrapper(argv: list[str], env: dict[str, str],
                        writable: list[Path]) -> tuple[list[str], dict[str, str]]:
                return box.wrap_process(argv, env, workspace, writable)

        options = config.judge_options()
        env = worker_env(options)
        if config.gpu is not None:
            env["CUDA_VISIBLE_DEVICES"] = gpu_identity(config.gpu)
        self.pool = JudgePool(env, wrapper=wrapper, confined=config.confined)
        if config.judge_lock is not None:
            self.pool.lock = config.judge_lock
        self.server = JudgeServer(None, self.pool, workspace, options)
        self.socket_path = self.server.socket_path
        self.server.start()

    def serve_for(self, tracker: BestTracker) -> None:
        """Workspace commands asking for the loop's own judgement get it from `tracker`
        (trusted, not judged again when their record claims a best); others are judged in
        place with their own settings, as before."""
        def judge(task: Path, candidate: Path, options: JudgeOptions,
                  progress: Callable[[str], None]) -> Verdict:
            found = tracker.judge_for_shell(task, candidate, options, progress)
            if found is None:
                found = self.server.check_in_place(task, candidate, options, progress)
            return found

        self.server.judge = judge

    def __enter__(self) -> JudgeService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.server.close()
        self.pool.close()
