"""The reward service: cudaopt's judge and workspace as an environment to train a
kernel-writing policy against (`cudaopt env serve`), and the client trainers import.

Nothing here imports an RL framework; docs/env.md shows how to plug `EnvClient` into one."""

from cudaopt.env.client import AsyncEnvClient, EnvClient, EnvError

__all__ = ["AsyncEnvClient", "EnvClient", "EnvError"]
