"""The memory's one domain exception. Every refusal carries a stable code, a message written for
a model, whether trying again can help, and an HTTP status for the door that shows it."""

from __future__ import annotations

from typing import Any


class MemoryServiceError(Exception):
    code = "memory_error"
    status = 400
    retryable = False

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        status: int | None = None,
        retryable: bool | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if status is not None:
            self.status = status
        if retryable is not None:
            self.retryable = retryable
        self.details = details or {}

    def as_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "code": self.code,
            "message": self.message,
            "retryable": self.retryable,
        }
        body.update(self.details)
        return body
