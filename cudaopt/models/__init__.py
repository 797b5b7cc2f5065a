"""From a user's own model to tasks and back: profile it, extract KernelBench tasks from its
hot parts, swap accepted kernels into it (as `torch.library` custom ops), and judge the whole
model. Built over the judge's public API (`check`, `JudgeOptions`, `Verdict`) and its kernel
build."""

from cudaopt.models.customops import KernelNotRegistered
from cudaopt.models.swap import SwapError, swap

__all__ = ["KernelNotRegistered", "SwapError", "swap"]
