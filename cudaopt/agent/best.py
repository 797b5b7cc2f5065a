"""The best verified candidate: cudaopt's own judgement, never the model's or a record's.

A record claiming a new best is re-judged here with `cudaopt.judge.check` before it may
replace `best/`: the model's shell could have written the record itself. A judge command in
the workspace that asks for exactly the loop's judgement (the run's task, the run's options)
is served by `judge_for_shell` from the same stage, so its record is trusted as it stands
and the candidate is not judged twice.
"""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from cudaopt.agent import records, stage
from cudaopt.judge import JudgeOptions, JudgePool, Verdict, check

#: Final checks of the best at most, while they come out noisy (see `final_check`).
FINAL_CHECKS = 3


def score(verdict: Verdict) -> tuple[float, float]:
    """Order of merit: the milestone reward first, then the speedup over torch.compile."""
    if not verdict.clean:
        return (-1.0, 0.0)
    return (verdict.reward, verdict.speedup_vs_compile or verdict.speedup_vs_eager or 0.0)


class BestTracker:
    """Keeps `run_dir/best/` holding the best candidate the loop has judged itself."""

    def __init__(
        self,
        task: Path,
        run_dir: Path,
        options: JudgeOptions,
        min_gain: float = 0.01,
        progress: Callable[[str], None] | None = None,
        stage_dir: Path | None = None,
        pool: JudgePool | None = None,
    ) -> None:
        self.task = task
        self.pool = pool  # warm workers shared with the workspace's judge server
        self.options = options
        self.min_gain = min_gain  # a new best must beat the old by this fraction (noise)
        self.progress = progress
        self.record_dir = run_dir / "candidates"
        self.best_dir = run_dir / "best"
        self.stage_dir = stage_dir or run_dir / "judging"
        self.trusted: dict[str, Verdict] = {}  # content hash -> verdict judged by the loop
        self._stage_lock = threading.Lock()  # the loop and the shell's judge share the stage
        self.best = records.read_verdict(self.best_dir) if self.best_dir.is_dir() else None
        self.best_index = _source_index(self.best_dir)

    @property
    def target_reached(self) -> bool:
        return self.best is not None and self.best.accepted

    def better(self, verdict: Verdict) -> bool:
        if not verdict.clean:
            return False
        if self.best is None:
            return True
        (reward, speedup), (best_reward, best_speedup) = score(verdict), score(self.best)
        return reward > best_reward or (
            reward == best_reward and speedup > best_speedup * (1 + self.min_gain)
        )

    def claims_better(self, claimed: Verdict) -> bool:
        """A record worth re-judging: timed, clean and better than the best on its face."""
        return claimed.candidate is not None and self.better(claimed)

    def judge(self, folder: Path, progress: Callable[[str], None] | None = None) -> Verdict:
        """Judge the candidate in `folder` (model_new.py + kernels/), once per content.

        The sources are copied to the stage first and the copy is judged, so the verdict
        belongs to exactly the bytes left in the stage (see `staged`)."""
        with self._stage_lock:
            candidate = stage.sync(folder, self.stage_dir)
            key = records.content_hash(self.stage_dir)
            if key not in self.trusted:
                self.trusted[key] = check(self.task, candidate, self.options,
                                          progress or self.progress, pool=self.pool)
            return self.trusted[key]

    def judge_for_shell(self, task: Path, candidate: Path, options: JudgeOptions,
                        progress: Callable[[str], None]) -> Verdict | None:
        """The loop's own judgement for a workspace command that asks for nothing else (the
        run's task bytes, the run's options, a candidate folder's model_new.py), with the
        stage's paths in its text put back to the workspace's; None for any other request.
        Judged from the stage like a record, it is trusted under the same content hash."""
        if (candidate.name != "model_new.py" or options != self.options
                or not _same_bytes(task, self.task)):
            return None
        verdict = self.judge(candidate.parent, progress)
        staged, here = (json.dumps(str(path))[1:-1] for path in (self.stage_dir,
                                                                 candidate.parent))
        return Verdict.from_json(json.loads(json.dumps(verdict.to_json()).replace(staged, here)))

    @property
    def staged(self) -> Path:
        """The model_new.py last judged (kernels/ beside it)."""
        return self.stage_dir / "model_new.py"

    def is_trusted(self, folder: Path) -> bool:
        return records.content_hash(folder) in self.trusted

    def offer(self, number: int, verdict: Verdict) -> bool:
        """Make record `number` (judged by the loop as `verdict`) the best if it is better."""
        if not self.better(verdict):
            return False
        source = records.record_path(self.record_dir, number)
        staging = self.best_dir.with_name("best.tmp")
        shutil.rmtree(staging, ignore_errors=True)
        records.snapshot(source / "model_new.py", staging)
        verdict.write(staging / "verdict.json")
        (staging / "SOURCE").write_text(f"candidates/{number:03d}\n")
        shutil.rmtree(self.best_dir, ignore_errors=True)
        staging.rename(self.best_dir)
        self.best, self.best_index = verdict, number
        return True

    def final_check(self) -> Verdict | None:
        """The best re-judged with fresh secret seeds and fresh weights in a new candidate
        process: the verdict that counts. The trusted reference and baseline processes stay
        (they load the task again under the new weights, see `JudgePool.reseed`).

        A correct, clean verdict whose timing was noisy even when re-measured (a machine
        busy with other work: it earns no speed reward) is judged again, fresh seeds each
        time, up to `FINAL_CHECKS` in all: a run must not throw away a kernel it found for
        a burst of someone else's load. The first verdict that is not noisy counts, or the
        last; noise never raises a reward, so this cannot make a slow kernel pass."""
        if self.best is None or not (self.best_dir / "model_new.py").is_file():
            return None
        with self._stage_lock:
            candidate = stage.sync(self.best_dir, self.stage_dir)
            verdict = self._fresh_check(candidate)
            for attempt in range(2, FINAL_CHECKS + 1):
                if not (verdict.noisy and verdict.clean):
                    break
                if self.progress is not None:
                    self.progress(f"the final check's timing was noisy (the machine is busy): "
                                  f"judging again, {attempt} of {FINAL_CHECKS}")
                verdict = self._fresh_check(candidate)
            return verdict

    def _fresh_check(self, candidate: Path) -> Verdict:
        if self.pool is not None:
            self.pool.reseed()
        return check(self.task, candidate, replace(self.options, seed=None), self.progress,
                     pool=self.pool)


def _same_bytes(a: Path, b: Path) -> bool:
    try:
        return a.read_bytes() == b.read_bytes()
    except OSError:
        return False


def _source_index(best_dir: Path) -> int | None:
    """Which record a resumed run's best/ came from (written by `offer`)."""
    try:
        return int((best_dir / "SOURCE").read_text().strip().rsplit("/", 1)[-1])
    except (OSError, ValueError):
        return None
