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

from memory import outgoing
from memory.models import Architect, Note, Run
from memory.stores.graph_types import (
    FIELD_SEP,
    QUERY_MODE,
    GraphContext,
    GraphUnavailable,
    check_keywords,
    context_from,
    note_of_chunk,
)

# At most this many source texts are read back into a server's answer.
MAX_SOURCE_TEXTS = 20


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
        # The wait for busy to pass is counted from the first busy answer, not from before the
        # first request: a request that itself took the whole wait (a loaded machine, a new
        # connection) still gets asked again.
        response = self._post_once(base, path, body)
        deadline = time.monotonic() + settings.GRAPH_BUSY_WAIT
        while _busy(response) and time.monotonic() < deadline:
            time.sleep(0.25)  # the server finishes a text insert in its own time
            response = self._post_once(base, path, body)
        if _busy(response):
            raise GraphUnavailable(  # busy passes: the outbox keeps the write and retries it
                f"LightRAG server {base}{path}: busy for {settings.GRAPH_BUSY_WAIT:g} s: "
                f"HTTP 409: {response.text[:300]}"
            )
        return response

    def _post_once(self, base: str, path: str, body: dict[str, Any]) -> httpx.Response:
        try:
            response = outgoing.client().post(
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

    def insert(self, *, architect_id, chunks, entities, relations) -> bool:  # type: ignore[no-untyped-def]
        """Entities and relations built by code, through the graph endpoints only: the server
        spends no model call (its /documents/text would extract with its model). The text of
        a source stays in the memory; each entity and relation names its sources (file_path,
        the memory's chunk names), and a query reads the texts back from the memory."""
        base = self.url_for(architect_id)
        names = {e.name for e in entities} | {n for r in relations for n in (r.source, r.target)}
        described = {e.name: e for e in entities}
        fallback = chunks[0].id if chunks else ""
        for name in sorted(names):
            entity = described.get(name)
            source = (entity.source if entity else "") or next(
                (r.chunk for r in relations if name in (r.source, r.target) and r.chunk), fallback
            )
            data = {
                "description": (entity.description if entity else "") or name,
                "entity_type": entity.type if entity else "thing",
                "source_id": source,
                "file_path": source,
            }
            response = self._post(
                base, "/graph/entity/create", {"entity_name": name, "entity_data": data}
            )
            if _exists(response):
                self._merge_entity(base, name, data)
            else:
                self._done(response)
        for relation in relations:
            if relation.source == relation.target:
                continue
            data = {
                "description": relation.description,
                "keywords": relation.keywords or relation.description,
                "weight": 1.0,
                "source_id": relation.chunk or fallback,
                "file_path": relation.chunk or fallback,
            }
            body = {
                "source_entity": relation.source,
                "target_entity": relation.target,
                "relation_data": data,
            }
            response = self._post(base, "/graph/relation/create", body)
            if _exists(response):
                self._merge_relation(base, relation.source, relation.target, data)
            else:
                self._done(response)
        return True  # the server's graph endpoints save what they take before they answer

    def save(self, architect_id: int) -> None:
        """Nothing is held here: every insert was saved by the server."""

    def _subgraph(self, base: str, name: str) -> dict[str, Any]:
        try:
            response = outgoing.client().get(
                f"{base}/graphs",
                params={"label": name, "max_depth": 1, "max_nodes": 50},
                headers={"X-API-Key": self.api_key} if self.api_key else {},
                timeout=settings.GRAPH_TIMEOUT,
            )
        except httpx.HTTPError as error:
            raise GraphUnavailable(f"LightRAG server {base}: {error}") from error
        if response.status_code != 200:
            raise GraphUnavailable(
                f"LightRAG server {base}/graphs: HTTP {response.status_code}: {response.text[:300]}"
            )
        return response.json()

    def _merge_entity(self, base: str, name: str, data: dict[str, Any]) -> None:
        """A thing another note already named: this note joins its sources and description."""
        graph = self._subgraph(base, name)
        node = next((n for n in graph.get("nodes", []) if n.get("id") == name), None)
        old = (node or {}).get("properties", {})
        updated = _merged(old, data, ("description", "source_id", "file_path"))
        if updated:
            self._done(
                self._post(
                    base, "/graph/entity/edit", {"entity_name": name, "updated_data": updated}
                )
            )

    def _merge_relation(self, base: str, source: str, target: str, data: dict[str, Any]) -> None:
        graph = self._subgraph(base, source)
        edge = next(
            (
                e
                for e in graph.get("edges", [])
                if {e.get("source"), e.get("target")} == {source, target}
            ),
            None,
        )
        old = (edge or {}).get("properties", {})
        updated = _merged(old, data, ("description", "keywords", "source_id", "file_path"))
        if updated:
            body = {"source_id": source, "target_id": target, "updated_data": updated}
            self._done(self._post(base, "/graph/relation/edit", body))

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
            return _with_source_texts(context_from(body))
        except (ValueError, AttributeError, TypeError) as error:
            raise GraphUnavailable(
                f"LightRAG /query/data answered out of form: {error}", retryable=False
            ) from error


def _with_source_texts(context: GraphContext) -> GraphContext:
    """The server keeps no text of the memory's sources (it was never sent one): the chunks of
    its answer are the notes and runs its entities and relations name, read from the memory."""
    have = {c.get("source") for c in context.chunks}
    named: list[str] = []
    for item in [*context.relations, *context.entities]:
        for source in item.get("sources", []):
            if source not in have and source not in named:
                named.append(source)
    named = named[:MAX_SOURCE_TEXTS]
    notes = {
        str(n.pk): n.text
        for n in Note.objects.filter(pk__in=[i for i in map(note_of_chunk, named) if i]).only(
            "pk", "text"
        )
    }
    runs = {
        f"run-{r.pk}": r.text
        for r in Run.objects.filter(
            pk__in=[s[len("run-") :] for s in named if s.startswith("run-") and _is_uuid(s[4:])]
        ).only("pk", "text")
    }
    for source in named:
        text = notes.get(note_of_chunk(source) or "") or runs.get(source)
        if text:
            context.chunks.append({"id": source, "content": text, "source": source})
    return context


def _is_uuid(value: str) -> bool:
    import uuid

    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def _exists(response: httpx.Response) -> bool:
    text = response.text.lower()
    return response.status_code in (400, 409) and (
        "already exist" in text or "already contains" in text
    )


def _merged(old: dict[str, Any], new: dict[str, Any], keys: tuple[str, ...]) -> dict[str, str]:
    """The fields of ``new`` joined to ``old`` (LightRAG's own separator), only those that grow."""
    out = {}
    for key in keys:
        have = [p for p in str(old.get(key) or "").split(FIELD_SEP) if p]
        add = str(new.get(key) or "")
        if add and add not in have:
            out[key] = FIELD_SEP.join([*have, add])
    return out


def _busy(response: httpx.Response) -> bool:
    """The server's pipeline is working on another insert (lightrag-hku answers 409 "busy")."""
    return response.status_code == 409 and "busy" in response.text.lower()
