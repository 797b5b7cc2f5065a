"""The trusted evaluator. It never imports litellm or git, and candidate code only ever runs
in a child process (see `runner`)."""

from cudaopt.judge.api import check
from cudaopt.judge.options import JudgeOptions
from cudaopt.judge.pool import JudgePool
from cudaopt.judge.signal import outputs_vary
from cudaopt.judge.taskcheck import check_task
from cudaopt.judge.verdict import EXIT_CODES, Status, Timing, Verdict

__all__ = ["JudgeOptions", "JudgePool", "Status", "Timing", "Verdict", "EXIT_CODES", "check",
           "check_task", "outputs_vary"]
