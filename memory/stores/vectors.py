"""Vectors: Qdrant through qdrant-client — local mode on disk by default, a server by QDRANT_URL.

Four kinds of collection: ``notes`` (verbatim notes and records), ``context`` (each note read
together with the note told just before it in the same conversation: a reply such as "yes, in
May" means something only beside its question; PASSPORT.md «Поиск»), ``summaries`` (what the
relearning cycle writes) and ``objects`` (object cards, the passport's ``memory-objects``).
Collection names carry the embedder's name and dimension, so a model change never mixes vectors.

Every point carries its architect and every search filters on it — a hard filter, not a hint.
Local mode has no payload index and scans on a filter (measured: ≈45 ms at 5.9k points in one
shared collection against <1 ms per collection), so the embedded default also keeps one
collection per architect; a server keeps one collection per kind with a payload index.
qdrant-client's own text helpers are never used: they download models.
"""

from __future__ import annotations

import math
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from django.conf import settings

from memory import scope as scopes
from memory.errors import MemoryServiceError
from memory.stores import door
from memory.stores.embeddings import Embedder, embedder

Kind = Literal["notes", "context", "summaries", "objects"]
KINDS: tuple[Kind, ...] = ("notes", "context", "summaries", "objects")
COLLECTION_PREFIX = {
    "notes": "memory-notes",
    "context": "memory-context",
    "summaries": "memory-summaries",
    "objects": "memory-objects",
}


class VectorsUnavailable(MemoryServiceError):
    code = "vectors_unavailable"
    status = 503
    retryable = True


@dataclass(frozen=True)
class VectorItem:
    id: str
    text: str
    payload: dict[str, Any]


@dataclass(frozen=True)
class VectorHit:
    id: str
    score: float
    payload: dict[str, Any]
    vector: list[float] | None = None  # the point's unit vector, when asked ``with_vectors``


def _unit(vector: Any) -> list[float]:
    """A point's vector at length 1 (cosine collections hold them so; a server may not say)."""
    values = [float(v) for v in vector]
    length = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / length for v in values]


def point_id(key: str) -> str:
    """Qdrant ids are UUIDs; any stable key maps to one."""
    try:
        return str(uuid.UUID(key))
    except ValueError:
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"memory:{key}"))


class QdrantVectors:
    def __init__(
        self, *, embed: Embedder, url: str, api_key: str, path: str, shared: bool | None = None
    ) -> None:
        from qdrant_client import QdrantClient

        self.embed = embed
        self.local = not url
        self.name = "qdrant-local" if self.local else "qdrant-server"
        # Layout: one collection per architect (local default) or one shared per kind (server).
        self.shared = (not self.local) if shared is None else shared
        self.client = (
            QdrantClient(
                url=url, api_key=api_key or None, timeout=math.ceil(settings.VECTORS_TIMEOUT)
            )
            if url
            else QdrantClient(path=path)
        )
        self._lock = threading.RLock()  # local mode is one in-process engine: one writer at a time
        self._ready: set[str] = set()

    def collection(self, kind: Kind, architect_id: int) -> str:
        base = f"{COLLECTION_PREFIX[kind]}-{self.embed.name}-{self.embed.dimension}"
        return base if self.shared else f"{base}-a{architect_id}"

    def _ensure(self, name: str) -> None:
        if name in self._ready:
            return
        from qdrant_client import models

        if not self.client.collection_exists(name):
            self.client.create_collection(
                name,
                vectors_config=models.VectorParams(
                    size=self.embed.dimension, distance=models.Distance.COSINE
                ),
            )
            if not self.local:  # local mode has no payload index
                self.client.create_payload_index(
                    name, field_name="architect", field_schema=models.PayloadSchemaType.INTEGER
                )
        self._ready.add(name)

    def add(self, *, kind: Kind, architect_id: int, items: Sequence[VectorItem]) -> list[str]:
        from qdrant_client import models

        if not items:
            return []
        vectors = self.embed.embed_documents([item.text for item in items])
        name = self.collection(kind, architect_id)
        points = [
            models.PointStruct(
                id=point_id(item.id),
                vector=vector,
                payload={
                    **item.payload,
                    "architect": architect_id,
                    "key": item.id,
                    "text": item.text,
                },
            )
            for item, vector in zip(items, vectors, strict=True)
        ]
        try:
            with self._lock:
                self._ensure(name)
                self.client.upsert(name, points=points, wait=True)
        except Exception as error:  # the client raises transport-specific errors
            raise VectorsUnavailable(f"qdrant: {error}") from error
        return [str(p.id) for p in points]

    def search(
        self,
        *,
        kind: Kind,
        architect_id: int,
        query: str,
        limit: int = 10,
        scope: Sequence[dict[str, Any]] = (),
        passage: bool = False,
        with_vectors: bool = False,
    ) -> list[VectorHit]:
        """The nearest points of one architect that may hold where and when asked: the place
        filter runs inside Qdrant, ``memory.scope.fits`` has the last word. ``passage`` reads
        ``query`` as a stored text, not a question (a note looking for the notes like it).
        ``with_vectors``: each hit carries its unit vector (in the same query), so the caller
        can compare the same points with another phrasing of the question."""
        from qdrant_client import models

        name = self.collection(kind, architect_id)
        embed = self.embed.embed_documents if passage else self.embed.embed_query
        vector = embed([query])[0]
        wanted = scopes.asked_places(scope)
        # A collection of its own holds one architect only: asking Qdrant's local mode to check
        # the architect anyway turns its numpy search into a loop over every point's payload
        # (bench/stores.py: 360 ms at 10k points with the filter). The check below stays.
        must = (
            [models.FieldCondition(key="architect", match=models.MatchValue(value=architect_id))]
            if self.shared
            else None
        )
        should = (
            None
            if wanted is None
            else [
                models.IsEmptyCondition(is_empty=models.PayloadField(key="places")),
                models.FieldCondition(key="places", match=models.MatchAny(any=wanted)),
            ]
        )
        only_this_architect = models.Filter(must=must, should=should) if must or should else None
        try:
            with self._lock:
                if not self.client.collection_exists(name):
                    return []
                found = self.client.query_points(
                    name,
                    query=vector,
                    query_filter=only_this_architect,
                    limit=limit,
                    with_payload=True,
                    with_vectors=with_vectors,
                ).points
        except Exception as error:
            raise VectorsUnavailable(f"qdrant: {error}") from error
        return [
            VectorHit(
                id=str((p.payload or {}).get("key", p.id)),
                score=float(p.score),
                payload=dict(p.payload or {}),
                vector=_unit(p.vector) if with_vectors else None,
            )
            for p in found
            if (p.payload or {}).get("architect") == architect_id
            and scopes.fits((p.payload or {}).get("scope") or [], scope)
        ]

    def count(self, *, kind: Kind, architect_id: int) -> int:
        from qdrant_client import models

        name = self.collection(kind, architect_id)
        try:
            with self._lock:
                if not self.client.collection_exists(name):
                    return 0
                return self.client.count(
                    name,
                    count_filter=models.Filter(
                        must=[
                            models.FieldCondition(
                                key="architect", match=models.MatchValue(value=architect_id)
                            )
                        ]
                    ),
                ).count
        except Exception as error:
            raise VectorsUnavailable(f"qdrant: {error}") from error

    def close(self) -> None:
        self.client.close()


class DoorVectors:
    """Local vectors seen from a process that does not own them: searches through the door."""

    name = "qdrant-door"

    def add(self, **kwargs: Any) -> list[str]:
        raise VectorsUnavailable(
            "vector writes go through the outbox, delivered by the process that holds the stores"
        )

    def search(
        self,
        *,
        kind: Kind,
        architect_id: int,
        query: str,
        limit: int = 10,
        scope: Sequence[dict[str, Any]] = (),
        passage: bool = False,
        with_vectors: bool = False,
    ) -> list[VectorHit]:
        if passage:  # only the holder of the stores compares notes (the outbox runs there)
            raise VectorsUnavailable("a note-to-note search runs where the vectors are owned")
        hits = door.client().vectors_search(
            architect_id=architect_id,
            kind=kind,
            query=query,
            limit=limit,
            scope=list(scope),
            with_vectors=with_vectors,
        )
        try:
            return [VectorHit(**hit) for hit in hits]
        except TypeError as error:
            raise VectorsUnavailable(
                f"the internal door answered a vector search out of form: {error}",
                retryable=False,
            ) from error


@lru_cache(maxsize=1)
def vectors() -> QdrantVectors | DoorVectors:
    if not settings.QDRANT_URL and settings.MEMORY_STORE_ACCESS == "door":
        return DoorVectors()
    return QdrantVectors(
        embed=embedder(),
        url=settings.QDRANT_URL,
        api_key=settings.QDRANT_API_KEY,
        path=str(settings.MEMORY_STORES_DIR / "qdrant"),
    )
