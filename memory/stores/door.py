"""The internal door, client side: how a process that does not own the embedded stores reaches
the one that does. Opened by the machine secret only (never by a memory key)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import httpx
from django.conf import settings

from memory.errors import MemoryServiceError

HEADER = "X-Machine-Secret"


class DoorUnavailable(MemoryServiceError):
    code = "internal_door_unavailable"
    status = 503
    retryable = True


class DoorClient:
    def __init__(self, url: str, secret: str, timeout: float) -> None:
        self.url = url.rstrip("/")
        self.secret = secret
        self.timeout = timeout

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        if not self.url:
            raise DoorUnavailable(
                "this process does not own the embedded stores and MEMORY_INTERNAL_URL is not set"
            )
        try:
            response = httpx.post(
                f"{self.url}/internal/v1/{path}",
                json=body,
                headers={HEADER: self.secret},
                timeout=self.timeout,
            )
        except httpx.HTTPError as error:
            raise DoorUnavailable(f"internal door {self.url}: {error}") from error
        if response.status_code >= 400:
            raise DoorUnavailable(
                f"internal door {path}: HTTP {response.status_code}: {response.text[:300]}",
                retryable=response.status_code >= 500,
            )
        return response.json()

    def drain(self, *, ids: list[int] | None, force: bool) -> dict[str, Any]:
        return self.post("outbox/drain", {"ids": ids, "force": force})


@lru_cache(maxsize=1)
def client() -> DoorClient:
    return DoorClient(settings.MEMORY_INTERNAL_URL, settings.MACHINE_SECRET, settings.GRAPH_TIMEOUT)
