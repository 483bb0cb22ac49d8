"""What every graph engine shares: the things written, the context read back, the one error,
and the rules of a query that costs no model call. The engines (in-process LightRAG in
``graph.py``, LightRAG servers in ``graph_server.py``, the door in ``graph.py``) import from
here, so none of them imports another."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from memory.errors import MemoryServiceError

QUERY_MODE = "mix"  # named explicitly: never "bypass", which always calls the model


class GraphUnavailable(MemoryServiceError):
    """The graph did not do what was asked. ``retryable`` says whether asking again can help:
    a timeout or a server that is down can; a question the library refuses cannot."""

    code = "graph_unavailable"
    status = 503
    retryable = True


NOTE_CHUNK_PREFIX = "note-"
SUMMARY_CHUNK_PREFIX = "summary-"
FIELD_SEP = "<SEP>"  # how LightRAG joins the sources of a merged entity or relation


def note_chunk_id(note_id: Any) -> str:
    """The name a note's chunk carries in the graph (LightRAG keeps it as the file path)."""
    return f"{NOTE_CHUNK_PREFIX}{note_id}"


def note_of_chunk(source: Any) -> str | None:
    """The note id a chunk's source names, or None for a source that is not a note (a run, a
    phrase, a document sent to a server by someone else, a mangled name)."""
    text = str(source or "")
    if not text.startswith(NOTE_CHUNK_PREFIX):
        return None
    try:
        return str(uuid.UUID(text[len(NOTE_CHUNK_PREFIX) :]))
    except ValueError:
        return None


@dataclass(frozen=True)
class Entity:
    name: str
    type: str = "thing"
    description: str = ""
    source: str = ""  # the chunk (note, phrase) it came from


@dataclass(frozen=True)
class Relation:
    source: str
    target: str
    description: str
    keywords: str = ""
    chunk: str = ""


@dataclass(frozen=True)
class Chunk:
    id: str
    content: str


@dataclass
class GraphContext:
    entities: list[dict[str, Any]] = field(default_factory=list)
    relations: list[dict[str, Any]] = field(default_factory=list)
    chunks: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_keywords(hl_keywords: Sequence[str], ll_keywords: Sequence[str]) -> None:
    if not hl_keywords or not ll_keywords:
        raise MemoryServiceError(
            "a graph query needs both hl_keywords and ll_keywords (built by code); without them "
            "LightRAG would call its model",
            code="graph_keywords_missing",
        )


def context_from(result: dict[str, Any]) -> GraphContext:
    """LightRAG's query-data answer (in-process or /query/data) as our context."""
    data = result.get("data") or {}
    return GraphContext(
        entities=[
            {
                "name": e.get("entity_name", ""),
                "type": e.get("entity_type", ""),
                "description": e.get("description", ""),
                "sources": [s for s in str(e.get("file_path") or "").split(FIELD_SEP) if s],
            }
            for e in data.get("entities") or []
        ],
        relations=[
            {
                "source": r.get("src_id", ""),
                "target": r.get("tgt_id", ""),
                "description": r.get("description", ""),
                "keywords": r.get("keywords", ""),
                # The chunks the relation was told in (merged relations keep every one).
                "sources": [s for s in str(r.get("file_path") or "").split(FIELD_SEP) if s],
            }
            for r in data.get("relationships") or []
        ],
        chunks=[
            {
                "id": c.get("chunk_id", ""),
                "content": c.get("content", ""),
                # The memory's own name of the source ("note-<id>", "run-<id>"), kept by
                # LightRAG as the chunk's file path.
                "source": c.get("file_path", "") or "",
            }
            for c in data.get("chunks") or []
        ],
    )


def summary_chunk_id(summary_id: Any) -> str:
    """The name a relearned summary's chunk carries in the graph."""
    return f"{SUMMARY_CHUNK_PREFIX}{summary_id}"


def summary_of_chunk(source: Any) -> str | None:
    """The summary id a chunk's source names, or None for any other source."""
    text = str(source or "")
    if not text.startswith(SUMMARY_CHUNK_PREFIX):
        return None
    try:
        return str(uuid.UUID(text[len(SUMMARY_CHUNK_PREFIX) :]))
    except ValueError:
        return None
