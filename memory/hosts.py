"""ALLOWED_HOSTS with ports. Django matches the Host header's host only and drops its port, so
"127.0.0.1:3700" in ALLOWED_HOSTS would never match anything. Here an entry written with a port
admits that host on that port only; an entry without a port keeps Django's behaviour (any port).

Settings split the variable once (``split``): Django gets the hosts without ports as
``ALLOWED_HOSTS``, and ``ALLOWED_HOST_PORTS`` keeps, for each host written ONLY with ports, the
ports it is served on. The middleware runs first: a Host Django refuses, or a port not named for
its host, is answered 400 before anything else reads the request — the one JSON error body
under /api/ and /internal/, plain text elsewhere (PASSPORT.md §14.4).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable

from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.http.request import split_domain_port, validate_host

from memory.i18n import Text

_WITH_PORT = re.compile(r"^(?P<host>\[[^\]]+\]|[^:\[\]]+):(?P<port>[0-9]+)$")
_JSON_PREFIXES = ("/api/", "/internal/")
_REFUSED = Text(
    ru="заголовок Host называет хост или порт, который этот сервер не обслуживает: {host}",
    en="the Host header names a host or port this server does not serve: {host}",
)

log = logging.getLogger("django.security.DisallowedHost")


def split(entries: Iterable[str]) -> tuple[list[str], dict[str, list[str]]]:
    """(Django's ALLOWED_HOSTS, {host: ports} for the hosts written only with ports)."""
    hosts: list[str] = []
    ported: dict[str, set[str]] = {}
    anyport: set[str] = set()
    for entry in entries:
        entry = entry.strip().lower()
        if not entry:
            continue
        found = _WITH_PORT.match(entry)
        if found:
            host = found["host"]
            ported.setdefault(host, set()).add(str(int(found["port"])))
        else:
            host = entry
            anyport.add(host)
        if host not in hosts:
            hosts.append(host)
    only_ported = {h: sorted(p) for h, p in ported.items() if h not in anyport}
    return hosts, only_ported


def admitted(domain: str, port: str, allowed: list[str], ported: dict[str, list[str]]) -> bool:
    """Whether a host Django already admits is served on this port."""
    if validate_host(domain, [h for h in allowed if h not in ported]):
        return True  # an entry without a port: any port, as Django does
    return any(port in ports and validate_host(domain, [h]) for h, ports in ported.items())


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
        from memory.contract.errors import error_body

        return JsonResponse(error_body("bad_host", message), status=400)
    return HttpResponseBadRequest(message, content_type="text/plain; charset=utf-8")
