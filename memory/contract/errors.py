"""One DRF exception handler, so every refusal of the contract has one body shape:
``{"contract": "<version>", "error": {"code", "message", "retryable", ...}}``."""

from __future__ import annotations

from typing import Any

from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from memory.contract.version import CONTRACT_VERSION
from memory.errors import MemoryServiceError

_CODES = {
    exceptions.NotAuthenticated: "no_key",
    exceptions.AuthenticationFailed: "bad_key",
    exceptions.PermissionDenied: "forbidden",
    exceptions.ParseError: "bad_json",
    exceptions.UnsupportedMediaType: "unsupported_media_type",
    exceptions.MethodNotAllowed: "method_not_allowed",
    exceptions.NotFound: "not_found",
    exceptions.Throttled: "throttled",
}


def error_body(code: str, message: str, *, retryable: bool = False, **extra: Any) -> dict[str, Any]:
    return {
        "contract": CONTRACT_VERSION,
        "error": {"code": code, "message": message, "retryable": retryable, **extra},
    }


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, MemoryServiceError):
        body = {"contract": CONTRACT_VERSION, "error": exc.as_dict()}
        return Response(body, status=exc.status)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    code = next((c for cls, c in _CODES.items() if isinstance(exc, cls)), "bad_request")
    detail = getattr(exc, "detail", "")
    message = str(detail) if not isinstance(detail, (dict, list)) else str(detail)
    retryable = response.status_code in (status.HTTP_429_TOO_MANY_REQUESTS,)
    response.data = error_body(code, message, retryable=retryable)
    return response
