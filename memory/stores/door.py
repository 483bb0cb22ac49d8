"""The internal door, client side: how a process that does not own the embedded stores reaches
the one that does. Opened by the machine secret only (never by a memory key).

The door's address comes from settings alone (``MEMORY_INTERNAL_URL``): nothing a request
carries — its Host header least of all — ever decides where the secret is sent. The bodies of
the door's calls are built here and nowhere else (``DoorGraph``, ``DoorVectors`` and the stand's
probe share them). PASSPORT.md §14.4.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import httpx
from django.conf import settings

from memory import outgoing
from memory.errors import MemoryServiceError
from memory.i18n import Text

HEADER = "X-Machine-Secret"

URL_MISSING = Text(
    ru=(
        "Адрес внутренней двери не задан (MEMORY_INTERNAL_URL): этот процесс не владеет "
        "встроенными хранилищами и не знает, куда спросить. `make run` задаёт его сам."
    ),
    en=(
        "The internal door's address is not set (MEMORY_INTERNAL_URL): this process does not "
        "own the embedded stores and does not know where to ask. `make run` sets it."
    ),
)


class DoorUnavailable(MemoryServiceError):
    code = "internal_door_unavailable"
    status = 503
    retryable = True


def graph_query_body(
    *,
    architect_id: int,
    question: str,
    hl_keywords: Sequence[str],
    ll_keywords: Sequence[str],
) -> dict[str, Any]:
    return {
        "architect": architect_id,
        "question": question,
        "hl_keywords": list(hl_keywords),
        "ll_keywords": list(ll_keywords),
    }


def vectors_search_body(
    *,
    architect_id: int,
    kind: str,
    query: str,
    limit: int,
    scope: list[dict[str, Any]],
    with_vectors: bool = False,
) -> dict[str, Any]:
    return {
        "architect": architect_id,
        "kind": kind,
        "query": query,
        "limit": limit,
        "scope": scope,
        "with_vectors": with_vectors,
    }


class DoorClient:
    def __init__(self, url: str, secret: str, timeout: float) -> None:
        self.url = url.rstrip("/")
        self.secret = secret
        self.timeout = timeout

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        if not self.url:
            raise DoorUnavailable(
                URL_MISSING("en"), code="internal_door_address_missing", retryable=False
            )
        try:
            response = outgoing.client().post(
                f"{self.url}/internal/v1/{path}",
                json=body,
                headers={HEADER: self.secret},
                timeout=self.timeout,
                follow_redirects=False,  # the secret goes to the configured address, nowhere else
            )
        except httpx.HTTPError as error:
            raise DoorUnavailable(f"internal door {self.url}: {error}") from error
        if response.status_code >= 400:
            raise _refusal(path, response)
        try:
            return response.json()
        except ValueError as error:
            raise DoorUnavailable(f"internal door {path}: the answer is not JSON") from error

    def graph_query(
        self,
        *,
        architect_id: int,
        question: str,
        hl_keywords: Sequence[str],
        ll_keywords: Sequence[str],
    ) -> dict[str, Any]:
        """The graph context as the holder's ``graph().query`` returned it (``GraphContext``'s
        fields)."""
        body = graph_query_body(
            architect_id=architect_id,
            question=question,
            hl_keywords=hl_keywords,
            ll_keywords=ll_keywords,
        )
        return self.post("graph/query", body)

    def vectors_search(
        self,
        *,
        architect_id: int,
        kind: str,
        query: str,
        limit: int,
        scope: list[dict[str, Any]] | None = None,
        with_vectors: bool = False,
    ) -> list[dict[str, Any]]:
        """The hits as the holder's ``vectors().search`` returned them (``VectorHit``'s fields)."""
        body = vectors_search_body(
            architect_id=architect_id,
            kind=kind,
            query=query,
            limit=limit,
            scope=scope or [],
            with_vectors=with_vectors,
        )
        return list(self.post("vectors/search", body)["hits"])

    def drain(self, *, ids: list[int] | None, force: bool) -> dict[str, Any]:
        return self.post("outbox/drain", {"ids": ids, "force": force})


def _refusal(path: str, response: httpx.Response) -> DoorUnavailable:
    """The holder's refusal, keeping its code and whether a retry can help when it says so."""
    error: dict[str, Any] = {}
    try:
        body = response.json()
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            error = body["error"]
    except ValueError:
        pass
    said = f"{error.get('code')}: {error.get('message')}" if error else response.text[:300]
    retryable = error.get("retryable")
    return DoorUnavailable(
        f"internal door {path}: HTTP {response.status_code}: {said}",
        retryable=retryable if isinstance(retryable, bool) else response.status_code >= 500,
    )


@lru_cache(maxsize=1)
def client() -> DoorClient:
    return DoorClient(settings.MEMORY_INTERNAL_URL, settings.MACHINE_SECRET, settings.DOOR_TIMEOUT)
