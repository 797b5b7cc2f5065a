"""Where judgements and agent runs execute: the one seam that `bench` and the reward service
share. A job is plain, picklable data (sources as text, options); an executor runs it on a
slot (one GPU, or one CPU worker) and hands back a `JobResult`. `LocalExecutor` runs slots
as processes on this machine; `RayExecutor` (`cudaopt.executor.cluster`, needs Ray) runs the
same `SlotRunner` in actors on a cluster; `make_executor` picks one."""

from cudaopt.executor.base import Executor, SlotSpec
from cudaopt.executor.factory import make_executor
from cudaopt.executor.jobs import Job, JobResult, Sources
from cudaopt.executor.local import LocalExecutor
from cudaopt.executor.slot import SlotRunner

__all__ = ["Executor", "Job", "JobResult", "LocalExecutor", "SlotRunner", "SlotSpec", "Sources",
           "make_executor"]
