"""Refusals the service answers with a status code and a reason, before any work starts."""

from __future__ import annotations

from typing import Any


class ServiceError(Exception):
    """An HTTP error answer: `status` 4xx for the caller's mistakes, 503 when busy (with
    `retry_after_s`), 410 for an episode lost in a restart."""

    def __init__(self, status: int, message: str, retry_after_s: int | None = None,
                 code: str = "bad_request"):
        super().__init__(message)
        self.status, self.message = status, message
        self.retry_after_s, self.code = retry_after_s, code

    def to_json(self) -> dict[str, Any]:
        body: dict[str, dict[str, Any]] = {"error": {"code": self.code, "message": self.message}}
        if self.retry_after_s is not None:
            body["error"]["retry_after_s"] = self.retry_after_s
        return body


def bad(message: str) -> ServiceError:
    return ServiceError(400, message)


def busy(what: str, retry_after_s: float) -> ServiceError:
    seconds = max(1, int(retry_after_s + 0.999))
    return ServiceError(503, f"busy: {what}; retry after {seconds} s", seconds, code="busy")
