"""The graph on a LightRAG server, over HTTP (httpx).

Measured against lightrag-hku 1.5.7: the data routes ignore any workspace header — a server
process serves one workspace — so each architect has a server of their own: ``LIGHTRAG_URLS``
maps architect names to URLs, or ``LIGHTRAG_URL`` is a template with ``{architect}`` (the id).
An architect with no server is refused, never sent to someone else's graph.

Writes: entities and relations through ``/graph/entity/create`` and ``/graph/relation/create``
(no model on the server's side), texts through ``/documents/text`` (asynchronous; the server's
model extracts from it; ``file_source`` unique per chunk). "Already exists" answers count as
done, so a replayed outbox item is harmless. Reads: ``/query/data`` with the mode named and both
keyword lists — zero model calls; a "failure" status with HTTP 200 means nothing was found.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import httpx
from django.conf import settings

from memory.models import Architect
from memory.stores.graph_types import (
    QUERY_MODE,
    GraphContext,
    GraphUnavailable,
    check_keywords,
    context_from,
)


class LightRagServer:
    name = "lightrag-server"

    def __init__(self, *, urls: Mapping[str, str], template: str, api_key: str) -> None:
        self.urls = dict(urls)
        self.template = template
        self.api_key = api_key

    def url_for(self, architect_id: int) -> str:
        architect = Architect.objects.filter(pk=architect_id).first()
        for key in (str(architect_id), architect.name if architect else None):
            if key is not None and key in self.urls:
                return self.urls[key].rstrip("/")
        if "{architect}" in self.template:
            return self.template.format(architect=architect_id).rstrip("/")
        raise GraphUnavailable(
            f"no LightRAG server for architect {architect_id}: name it in LIGHTRAG_URLS or give "
            "LIGHTRAG_URL an {architect} placeholder",
            retryable=False,
        )

    def _post(self, base: str, path: str, body: dict[str, Any]) -> httpx.Response:
        deadline = time.monotonic() + settings.GRAPH_BUSY_WAIT
        while True:
            response = self._post_once(base, path, body)
            if not _busy(response) or time.monotonic() >= deadline:
                break
            time.sleep(0.25)  # the server finishes a text insert in its own time
        if _busy(response):
            raise GraphUnavailable(  # busy passes: the outbox keeps the write and retries it
                f"LightRAG server {base}{path}: busy for {settings.GRAPH_BUSY_WAIT:g} s: "
                f"HTTP 409: {response.text[:300]}"
            )
        return response

    def _post_once(self, base: str, path: str, body: dict[str, Any]) -> httpx.Response:
        try:
            response = httpx.post(
                f"{base}{path}",
                json=body,
                headers={"X-API-Key": self.api_key} if self.api_key else {},
                timeout=settings.GRAPH_TIMEOUT,
            )
        except httpx.InvalidURL as error:  # a URL from the settings that cannot be one
            raise GraphUnavailable(f"LightRAG server {base}: {error}", retryable=False) from error
        except httpx.HTTPError as error:  # timeouts, refused connections, broken transfers
            raise GraphUnavailable(f"LightRAG server {base}: {error}") from error
        if response.status_code >= 500 or response.status_code in (401, 403, 429):
            raise GraphUnavailable(
                f"LightRAG server {base}{path}: HTTP {response.status_code}: {response.text[:300]}",
                retryable=response.status_code not in (401, 403),
            )
        return response

    @staticmethod
    def _done(response: httpx.Response) -> None:
        """200, or a refusal that only says the thing is already there."""
        if response.status_code == 200:
            return
        text = response.text.lower()
        if response.status_code in (400, 409) and (
            "already exist" in text or "already contains" in text
        ):
            return
        raise GraphUnavailable(
            f"LightRAG server refused: HTTP {response.status_code}: {response.text[:300]}",
            retryable=False,
        )

    def insert(self, *, architect_id, chunks, entities, relations) -> None:  # type: ignore[no-untyped-def]
        base = self.url_for(architect_id)
        names = {e.name for e in entities} | {n for r in relations for n in (r.source, r.target)}
        described = {e.name: e for e in entities}
        for name in sorted(names):
            entity = described.get(name)
            data = {
                "description": (entity.description if entity else "") or name,
                "entity_type": entity.type if entity else "thing",
            }
            self._done(
                self._post(base, "/graph/entity/create", {"entity_name": name, "entity_data": data})
            )
        for relation in relations:
            if relation.source == relation.target:
                continue
            body = {
                "source_entity": relation.source,
                "target_entity": relation.target,
                "relation_data": {
                    "description": relation.description,
                    "keywords": relation.keywords or relation.description,
                    "weight": 1.0,
                },
            }
            self._done(self._post(base, "/graph/relation/create", body))
        for chunk in chunks:
            self._done(
                self._post(
                    base, "/documents/text", {"text": chunk.content, "file_source": chunk.id}
                )
            )

    def query(self, *, architect_id, question, hl_keywords, ll_keywords) -> GraphContext:  # type: ignore[no-untyped-def]
        check_keywords(hl_keywords, ll_keywords)
        base = self.url_for(architect_id)
        response = self._post(
            base,
            "/query/data",
            {
                "query": question,
                "mode": QUERY_MODE,
                "only_need_context": True,
                "hl_keywords": list(hl_keywords),
                "ll_keywords": list(ll_keywords),
                "enable_rerank": False,
            },
        )
        if response.status_code != 200:
            # The server refused this question (too short for it, or out of its form): asking
            # the same again cannot help.
            raise GraphUnavailable(
                f"LightRAG /query/data: HTTP {response.status_code}: {response.text[:300]}",
                code="graph_refused",
                retryable=False,
            )
        try:
            body = response.json()
            if body.get("status") == "failure":
                return GraphContext()
            return context_from(body)
        except (ValueError, AttributeError, TypeError) as error:
            raise GraphUnavailable(
                f"LightRAG /query/data answered out of form: {error}", retryable=False
            ) from error


def _busy(response: httpx.Response) -> bool:
    """The server's pipeline is working on another insert (lightrag-hku answers 409 "busy")."""
    return response.status_code == 409 and "busy" in response.text.lower()
