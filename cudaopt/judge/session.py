"""One judgement's two worker processes and the secret seeds they are driven with."""

from __future__ import annotations

import os
import random
import secrets
import shutil
import tempfile
from pathlib import Path
from typing import Any

from cudaopt.judge.options import JudgeOptions
from cudaopt.judge.runner import Worker


def cache_root(options: JudgeOptions) -> Path:
    """Per-user cache for torch.compile artifacts and load_inline builds, reused across runs."""
    if options.cache_dir:
        return options.cache_dir
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cudaopt"


def _scratch_root() -> str | None:
    """Outputs cross between workers through files: RAM-backed /dev/shm when available."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


class Session:
    """The reference and candidate workers of one judgement, plus a scratch folder."""

    def __init__(self, options: JudgeOptions, device: str):
        self.options = options
        self.device = device
        # Secret per run; a fixed `options.seed` exists only to make tests repeatable.
        self._rng = (secrets.SystemRandom() if options.seed is None
                     else random.Random(options.seed))
        self.scratch = Path(tempfile.mkdtemp(prefix="cudaopt-", dir=_scratch_root()))
        cache = cache_root(options)
        env = {
            "TORCHINDUCTOR_CACHE_DIR": str(cache / "inductor"),
            "TORCH_EXTENSIONS_DIR": str(cache / "torch_extensions"),
            "TRITON_CACHE_DIR": str(cache / "triton"),
        }
        self.env = {k: os.environ.get(k, v) for k, v in env.items()}
        self.init_seed = self.seed()
        self.reference = Worker("reference", self.scratch / "reference.log", self.env)
        self.candidate = Worker("candidate", self.scratch / "candidate.log", self.env)
        self.baseline: Worker | None = None
        self.inputs_mutable = False  # the task itself modifies its inputs: so may the candidate

    def start_baseline(self, task: Path) -> None:
        """A second reference process for eager and torch.compile timing, started first so
        compiling the baseline overlaps the build and the verification."""
        self.baseline = Worker("reference", self.scratch / "baseline.log", self.env)
        self.baseline.send("load", task=str(task.resolve()), device=self.device,
                           init_seed=self.init_seed,
                           state_path=str(self.scratch / "baseline_state.pt"))
        if self.options.compile_baseline:
            self.baseline.send("compile", mode=self.options.compile_mode,
                               seeds=[self.seed(), self.seed()])

    def seed(self) -> int:
        return self._rng.randrange(1, 2**62)

    def rand(self) -> float:
        return self._rng.random()

    def rand_shuffle(self, items: list[Any]) -> None:
        self._rng.shuffle(items)

    def outputs_dir(self, name: str) -> Path:
        path = self.scratch / name
        path.mkdir(exist_ok=True)
        return path

    def clear(self, path: Path) -> None:
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir()

    def close(self) -> None:
        for worker in (self.candidate, self.reference, self.baseline):
            if worker is not None:
                worker.close()
        shutil.rmtree(self.scratch, ignore_errors=True)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
