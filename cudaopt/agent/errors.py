"""Why a model call failed; the lowest floor of the agent, so every policy (litellm, replay)
and the loop above them import it without importing each other."""

from __future__ import annotations


class ModelError(RuntimeError):
    """A call to the model failed for good (after retries); the run stops, resumable."""


class PreflightError(ModelError):
    """The model cannot be used at all: unknown name, missing key, endpoint down."""


class ReplayExhausted(ModelError):
    """A replayed trajectory has no more recorded turns."""


class ContextTooLong(ModelError):
    """The provider refused a request as longer than the model's context window;
    `window_tokens` is the window it stated, when it stated one."""

    def __init__(self, message: str, window_tokens: int | None = None) -> None:
        super().__init__(message)
        self.window_tokens = window_tokens
