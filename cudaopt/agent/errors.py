"""Why a model call failed; the lowest floor of the agent, so every policy (litellm, replay)
and the loop above them import it without importing each other."""

from __future__ import annotations


class ModelError(RuntimeError):
    """A call to the model failed for good (after retries); the run stops, resumable."""


class PreflightError(ModelError):
    """The model cannot be used at all: unknown name, missing key, endpoint down."""


class ReplayExhausted(ModelError):
    """A replayed trajectory has no more recorded turns."""
