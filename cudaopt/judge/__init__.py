"""The trusted evaluator. It never imports litellm or git, and candidate code only ever runs
in a child process (see `runner`)."""

from cudaopt.judge.options import JudgeOptions
from cudaopt.judge.verdict import EXIT_CODES, Status, Timing, Verdict

__all__ = ["JudgeOptions", "Status", "Timing", "Verdict", "EXIT_CODES", "check"]


def check(task, candidate, options=None, progress=None):  # noqa: ANN001 - re-exported below
    from cudaopt.judge.api import check as _check

    return _check(task, candidate, options, progress)
