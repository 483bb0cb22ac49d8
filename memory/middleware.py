"""The first middleware: ALLOWED_HOSTS with ports (the rule is ``memory.hosts``). A Host Django
refuses, or a port not named for its host, is answered 400 before anything else reads the
request — the one JSON error body under /api/ and /internal/, plain text elsewhere."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.http.request import split_domain_port

from memory.contract.errors import error_body
from memory.hosts import admitted
from memory.i18n import Text

_JSON_PREFIXES = ("/api/", "/internal/")
_REFUSED = Text(
    ru="заголовок Host называет хост или порт, который этот сервер не обслуживает: {host}",
    en="the Host header names a host or port this server does not serve: {host}",
)

log = logging.getLogger("django.security.DisallowedHost")


class HostPortMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            request.get_host()  # Django's own check (the host without its port)
        except DisallowedHost as error:
            log.warning("%s", error)
            return _refuse(request)
        ported: dict[str, list[str]] = getattr(settings, "ALLOWED_HOST_PORTS", {})
        if ported:
            domain, port = split_domain_port(request._get_raw_host())
            port = port or ("443" if request.is_secure() else "80")
            if not admitted(domain, str(int(port)), list(settings.ALLOWED_HOSTS), ported):
                log.warning("Invalid HTTP_HOST header: %r: not served on this port", domain)
                return _refuse(request)
        return self.get_response(request)


def _refuse(request: HttpRequest) -> HttpResponse:
    raw = request.META.get("HTTP_HOST", "")[:200]
    message = _REFUSED(settings.MEMORY_LANG, host=raw)
    if request.path.startswith(_JSON_PREFIXES):
        return JsonResponse(error_body("bad_host", message), status=400)
    return HttpResponseBadRequest(message, content_type="text/plain; charset=utf-8")
