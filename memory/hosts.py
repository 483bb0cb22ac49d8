"""ALLOWED_HOSTS with ports. Django matches the Host header's host only and drops its port, so
"127.0.0.1:3700" in ALLOWED_HOSTS would never match anything. Here an entry written with a port
admits that host on that port only; an entry without a port keeps Django's behaviour (any port).

Settings split the variable once (``split``): Django gets the hosts without ports as
``ALLOWED_HOSTS``, and ``ALLOWED_HOST_PORTS`` keeps, for each host written ONLY with ports, the
ports it is served on. The middleware (``memory.middleware``) runs first: a Host Django refuses, or a
port not named for its host, is answered 400 before anything else reads the request (PASSPORT.md §14.4).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from django.http.request import validate_host

_WITH_PORT = re.compile(r"^(?P<host>\[[^\]]+\]|[^:\[\]]+):(?P<port>[0-9]+)$")


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
