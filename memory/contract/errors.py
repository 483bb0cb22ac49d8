"""One error body for everything under /api/:
``{"contract": "<version>", "error": {"code", "message", "retryable", ...}}``.

DRF's refusals come through :func:`exception_handler`; Django's own 400, 403, 404 and 500 through
the handlers below (``memory/urls.py``), which answer JSON for /api/ paths and Django's HTML pages
elsewhere; the gate's 413, 431 and 400 through :func:`json_error` (``memory.contract.limits``).
Every message is written in the answer's language (the body's ``lang``, else ``MEMORY_LANG``).
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.db import OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from memory.contract.version import CONTRACT_VERSION
from memory.errors import MemoryServiceError
from memory.i18n import Text

log = logging.getLogger(__name__)

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

API_PREFIX = "/api/"
_VERBS = "POST /api/v1/remember, POST /api/v1/recall"
MESSAGES = {
    "no_key": Text(
        ru="нет ключа памяти: передайте заголовок 'Authorization: Bearer <ключ памяти>'",
        en="no memory key: send the header 'Authorization: Bearer <memory key>'",
    ),
    "bad_key": Text(
        ru="ключ памяти не принят: нужен заголовок 'Authorization: Bearer <ключ памяти>' с "
        "действующим ключом",
        en="the memory key is not accepted: send 'Authorization: Bearer <memory key>' with a "
        "valid key",
    ),
    "forbidden": Text(ru="доступ запрещён", en="access is forbidden"),
    "bad_json": Text(ru="тело запроса — не JSON", en="the request body is not JSON"),
    "unsupported_media_type": Text(
        ru="тело запроса — JSON (Content-Type: application/json), а пришло: {media_type}",
        en="the request body is JSON (Content-Type: application/json), not: {media_type}",
    ),
    "method_not_allowed": Text(
        ru="метод {method} здесь не принимается; этот адрес принимает: {allowed}",
        en="the method {method} is not taken here; this address takes: {allowed}",
    ),
    "not_found": Text(
        ru="по адресу {path} ничего нет; глаголы памяти: " + _VERBS,
        en="nothing is at {path}; the memory's verbs: " + _VERBS,
    ),
    "throttled": Text(
        ru="слишком много запросов; повторите через {wait} с",
        en="too many requests; try again in {wait} s",
    ),
    "bad_request": Text(ru="запрос не принят: {reason}", en="the request is refused: {reason}"),
    "bad_http": Text(
        ru="запрос не принят: он нарушает правила HTTP этого сервера",
        en="the request is refused: it breaks this server's HTTP rules",
    ),
    "database_busy": Text(
        ru="база памяти занята или недоступна, ничего не записано; повторите запрос",
        en="the memory's database is busy or unreachable and nothing was written; send it again",
    ),
    "server_error": Text(
        ru="внутренняя ошибка памяти; причина записана в журнал сервера",
        en="an internal error of the memory; the cause is in the server's log",
    ),
}


def error_body(code: str, message: str, *, retryable: bool = False, **extra: Any) -> dict[str, Any]:
    return {
        "contract": CONTRACT_VERSION,
        "error": {"code": code, "message": message, "retryable": retryable, **extra},
    }


def json_error(
    status_code: int, code: str, message: str, *, retryable: bool = False, **extra: Any
) -> JsonResponse:
    """The one error body as a plain Django response (for what happens outside DRF)."""
    return JsonResponse(
        error_body(code, message, retryable=retryable, **extra),
        status=status_code,
        json_dumps_params={"ensure_ascii": False},
    )


def _lang(request: Any) -> str:
    return getattr(request, "memory_lang", None) or settings.MEMORY_LANG


def _message(exc: Exception, code: str, context: dict[str, Any], lang: str) -> str:
    request = context.get("request")
    if code == "method_not_allowed":
        view = context.get("view")
        allowed = ", ".join(getattr(view, "allowed_methods", ()) or ())
        return MESSAGES[code](lang, method=getattr(request, "method", ""), allowed=allowed)
    if code == "unsupported_media_type":
        return MESSAGES[code](lang, media_type=getattr(request, "content_type", "") or "—")
    if code == "not_found":
        return MESSAGES[code](lang, path=getattr(request, "path", ""))
    if code == "throttled":
        return MESSAGES[code](lang, wait=getattr(exc, "wait", None) or "?")
    if code in MESSAGES and code != "bad_request":
        return MESSAGES[code](lang)
    detail = getattr(exc, "detail", "")
    return MESSAGES["bad_request"](lang, reason=str(detail))


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, MemoryServiceError):
        body = {"contract": CONTRACT_VERSION, "error": exc.as_dict()}
        return Response(body, status=exc.status)
    if isinstance(exc, OperationalError):
        # A deadlock, a lock timeout, a lost connection: the transaction was rolled back, so
        # nothing was written and asking again can succeed. (After its commit a verb lets no
        # error out: PASSPORT.md §14.2.)
        log.warning("database busy: %s", exc)
        message = MESSAGES["database_busy"](_lang(context.get("request")))
        return Response(error_body("database_busy", message, retryable=True), status=503)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    code = next((c for cls, c in _CODES.items() if isinstance(exc, cls)), "bad_request")
    message = _message(exc, code, context, _lang(context.get("request")))
    retryable = response.status_code in (status.HTTP_429_TOO_MANY_REQUESTS,)
    response.data = error_body(code, message, retryable=retryable)
    return response


def is_api(path: str) -> bool:
    return path.startswith(API_PREFIX)


def _is_api(request: HttpRequest) -> bool:
    return is_api(request.path)


def handler400(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _is_api(request):
        return json_error(400, "bad_request", MESSAGES["bad_http"](_lang(request)))
    return defaults.bad_request(request, exception)


def handler403(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _is_api(request):
        return json_error(403, "forbidden", MESSAGES["forbidden"](_lang(request)))
    return defaults.permission_denied(request, exception)


def handler404(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _is_api(request):
        message = MESSAGES["not_found"](_lang(request), path=request.path)
        return json_error(404, "not_found", message)
    return defaults.page_not_found(request, exception)


def handler500(request: HttpRequest) -> HttpResponse:
    if _is_api(request):
        return json_error(500, "server_error", MESSAGES["server_error"](_lang(request)))
    return defaults.server_error(request)
