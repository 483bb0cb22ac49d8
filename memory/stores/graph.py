"""The knowledge graph: LightRAG. Production: a LightRAG server over HTTP. Embedded default:
LightRAG in-process with its file storages, our embedder and a tokenizer that needs no download.

The graph is filled by code (never by the agent) and read at ZERO model cost: every query names
its mode explicitly (never ``bypass``), asks for context only, and carries BOTH ``hl_keywords``
and ``ll_keywords`` built by code — without them LightRAG would call its model to extract
keywords. The in-process engine gets a model function that raises, so a model call can never
happen silently. One workspace per architect.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from django.conf import settings

from memory.errors import MemoryServiceError
from memory.stores.embeddings import Embedder, embedder

QUERY_MODE = "mix"  # named explicitly: never "bypass", which always calls the model


def _quiet_lightrag() -> None:
    import logging

    # LightRAG sets up its own handler at INFO and logs every query step.
    logging.getLogger("lightrag").setLevel(logging.WARNING)


class GraphUnavailable(MemoryServiceError):
    code = "graph_unavailable"
    status = 503
    retryable = True


class GraphCalledModel(MemoryServiceError):
    """The graph tried to call a model: a bug by definition (SPEC §3)."""

    code = "graph_called_model"
    status = 500


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


class Graph(Protocol):
    def insert(
        self,
        *,
        architect_id: int,
        chunks: Sequence[Chunk],
        entities: Sequence[Entity],
        relations: Sequence[Relation],
    ) -> None: ...

    def query(
        self,
        *,
        architect_id: int,
        question: str,
        hl_keywords: Sequence[str],
        ll_keywords: Sequence[str],
    ) -> GraphContext: ...


def check_keywords(hl_keywords: Sequence[str], ll_keywords: Sequence[str]) -> None:
    if not hl_keywords or not ll_keywords:
        raise MemoryServiceError(
            "a graph query needs both hl_keywords and ll_keywords (built by code); without them "
            "LightRAG would call its model",
            code="graph_keywords_missing",
        )


# --- the tokenizer -------------------------------------------------------------------------------

_TOKEN = re.compile(r"\w+|\s+|[^\w\s]", re.UNICODE)
_VOCAB: dict[str, int] = {}
_WORDS: list[str] = []
_VOCAB_LOCK = threading.Lock()


class WordTokenizer:
    """Words, runs of spaces and single signs, each an id in a vocabulary that grows as it meets
    them: reversible, needs no file, and counts close to a subword tokenizer for budgeting.
    State is module-level so LightRAG may deep-copy the object; safe across threads."""

    def encode(self, content: str) -> list[int]:
        ids = []
        for piece in _TOKEN.findall(content):
            index = _VOCAB.get(piece)
            if index is None:
                with _VOCAB_LOCK:
                    index = _VOCAB.get(piece)
                    if index is None:
                        index = len(_WORDS)
                        _WORDS.append(piece)
                        _VOCAB[piece] = index
            ids.append(index)
        return ids

    def decode(self, tokens: list[int]) -> str:
        return "".join(_WORDS[i] for i in tokens)


# --- in-process LightRAG -------------------------------------------------------------------------


class _Loop:
    """One asyncio loop in its own thread: LightRAG's instances live and run there."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, name="lightrag-loop", daemon=True
        )
        self.thread.start()

    def stop(self) -> None:
        """Cancel LightRAG's background workers, then stop the loop and its thread."""

        async def cancel_all() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        self.run(cancel_all(), timeout=30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()

    def run(self, coroutine: Any, timeout: float) -> Any:
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        try:
            return future.result(timeout=timeout)
        except FutureTimeout as error:
            future.cancel()
            raise GraphUnavailable(
                f"the in-process graph did not answer within {timeout:.0f} s"
            ) from error


# LightRAG deep-copies its configuration, so the functions it is given are module-level and
# reach the embedder by lookup instead of holding it.
MODEL_CALLS = {"count": 0}


async def _embed(texts: list[str], context: str | None = None, **_: Any) -> Any:
    import numpy as np

    loop = asyncio.get_running_loop()
    e = embedder()
    fn = e.embed_query if context == "query" else e.embed_documents
    return np.array(await loop.run_in_executor(None, fn, list(texts)), dtype="float32")


async def _no_model(*args: Any, **kwargs: Any) -> str:
    MODEL_CALLS["count"] += 1
    raise GraphCalledModel("the in-process graph tried to call a model; level 3 must not")


class LocalLightRag:
    name = "lightrag-local"

    def __init__(self, *, working_dir: Path, embed: Embedder) -> None:
        self.working_dir = working_dir
        self.embed = embed
        self._loop = _Loop()
        self._instances: dict[int, Any] = {}
        self._lock = threading.Lock()

    def _instance(self, architect_id: int) -> Any:
        with self._lock:
            if architect_id not in self._instances:
                from lightrag import LightRAG
                from lightrag.utils import EmbeddingFunc, Tokenizer

                _quiet_lightrag()
                self.working_dir.mkdir(parents=True, exist_ok=True)
                rag = LightRAG(
                    working_dir=str(self.working_dir),
                    workspace=f"architect-{architect_id}",
                    embedding_func=EmbeddingFunc(embedding_dim=self.embed.dimension, func=_embed),
                    llm_model_func=_no_model,
                    tokenizer=Tokenizer("memory-words", WordTokenizer()),
                    cosine_better_than_threshold=settings.GRAPH_COSINE_THRESHOLD,
                )
                self._loop.run(rag.initialize_storages(), timeout=60)
                self._instances[architect_id] = rag
            return self._instances[architect_id]

    def close(self) -> None:
        """Flush and release every workspace, then stop the loop."""
        for rag in self._instances.values():
            self._loop.run(rag.finalize_storages(), timeout=60)
        self._instances.clear()
        self._loop.stop()

    def insert(self, *, architect_id, chunks, entities, relations) -> None:  # type: ignore[no-untyped-def]
        custom_kg = {
            "chunks": [
                {"content": c.content, "source_id": c.id, "file_path": c.id} for c in chunks
            ],
            "entities": [
                {
                    "entity_name": e.name,
                    "entity_type": e.type,
                    "description": e.description or e.name,
                    "source_id": e.source,
                    "file_path": e.source or "memory",
                }
                for e in entities
            ],
            "relationships": [
                {
                    "src_id": r.source,
                    "tgt_id": r.target,
                    "description": r.description,
                    "keywords": r.keywords or r.description,
                    "weight": 1.0,
                    "source_id": r.chunk,
                    "file_path": r.chunk or "memory",
                }
                for r in relations
                if r.source != r.target
            ],
        }
        rag = self._instance(architect_id)
        self._loop.run(rag.ainsert_custom_kg(custom_kg), timeout=settings.GRAPH_TIMEOUT)

    def query(self, *, architect_id, question, hl_keywords, ll_keywords) -> GraphContext:  # type: ignore[no-untyped-def]
        from lightrag import QueryParam

        check_keywords(hl_keywords, ll_keywords)
        rag = self._instance(architect_id)
        param = QueryParam(
            mode=QUERY_MODE,
            only_need_context=True,
            hl_keywords=list(hl_keywords),
            ll_keywords=list(ll_keywords),
            enable_rerank=False,
        )
        result = self._loop.run(rag.aquery_data(question, param), timeout=settings.GRAPH_TIMEOUT)
        return context_from(result)


def context_from(result: dict[str, Any]) -> GraphContext:
    """LightRAG's query-data answer (in-process or /query/data) as our context."""
    data = result.get("data") or {}
    return GraphContext(
        entities=[
            {
                "name": e.get("entity_name", ""),
                "type": e.get("entity_type", ""),
                "description": e.get("description", ""),
            }
            for e in data.get("entities") or []
        ],
        relations=[
            {
                "source": r.get("src_id", ""),
                "target": r.get("tgt_id", ""),
                "description": r.get("description", ""),
                "keywords": r.get("keywords", ""),
            }
            for r in data.get("relationships") or []
        ],
        chunks=[
            {"id": c.get("chunk_id", ""), "content": c.get("content", "")}
            for c in data.get("chunks") or []
        ],
    )


class DoorGraph:
    """The embedded graph seen from a process that does not own it: reads through the door."""

    name = "lightrag-door"

    def insert(self, **kwargs: Any) -> None:
        raise GraphUnavailable("graph writes go through the outbox, delivered by the owner")

    def query(self, *, architect_id, question, hl_keywords, ll_keywords) -> GraphContext:  # type: ignore[no-untyped-def]
        from memory.stores import door

        check_keywords(hl_keywords, ll_keywords)
        data = door.client().post(
            "graph/query",
            {
                "architect": architect_id,
                "question": question,
                "hl_keywords": list(hl_keywords),
                "ll_keywords": list(ll_keywords),
            },
        )
        return GraphContext(**data)


@lru_cache(maxsize=1)
def graph() -> Graph:
    if settings.LIGHTRAG_URL or settings.LIGHTRAG_URLS:
        from memory.stores.graph_server import LightRagServer

        return LightRagServer(
            urls=settings.LIGHTRAG_URLS,
            template=settings.LIGHTRAG_URL,
            api_key=settings.LIGHTRAG_API_KEY,
        )
    if settings.MEMORY_STORE_ACCESS == "door":
        return DoorGraph()
    return LocalLightRag(working_dir=settings.MEMORY_STORES_DIR / "lightrag", embed=embedder())
