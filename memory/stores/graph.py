"""The knowledge graph: LightRAG. Production: a LightRAG server over HTTP. Embedded default:
LightRAG in-process with its file storages, our embedder and a tokenizer that needs no download.
In-process LightRAG on PostgreSQL (``GRAPH_DATABASE_URL``): the same library in the memory's own
processes over one database — key-value, vectors (pgvector), graph in plain tables, one workspace
an architect in shared tables — so adding an architect adds no service, and any process may
reach it (it is not embedded).

The in-process engine on files saves them by what it costs, not after every insert: an insert is in
memory (findable at once) and saved when the bytes a save writes, spread over the inserts it
saves, fall under GRAPH_SAVE_BYTES — so bytes written per insert stay flat as the graph grows.
``insert`` says whether the work is saved; the outbox keeps unsaved items ``held`` and replays
them after a crash.

The graph is filled by code (never by the agent) and read at ZERO model cost: every query names
its mode explicitly (never ``bypass``), asks for context only, and carries BOTH ``hl_keywords``
and ``ll_keywords`` built by code — without them LightRAG would call its model to extract
keywords. The in-process engine gets a model function that raises, so a model call can never
happen silently. One workspace per architect.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from django.conf import settings

from memory.errors import MemoryServiceError
from memory.stores import door
from memory.stores.embeddings import Embedder, embedder
from memory.stores.graph_server import LightRagServer
from memory.stores.graph_types import (
    QUERY_MODE,
    Chunk,
    Entity,
    GraphContext,
    GraphUnavailable,
    Relation,
    check_keywords,
    context_from,
)

# Other modules take the shared types from here as well as from graph_types.
__all__ = [
    "QUERY_MODE",
    "Chunk",
    "Entity",
    "Graph",
    "GraphCalledModel",
    "GraphContext",
    "GraphUnavailable",
    "Relation",
    "check_keywords",
    "context_from",
    "graph",
]

log = logging.getLogger(__name__)


def _quiet_lightrag() -> None:
    # LightRAG sets up its own handler at INFO and logs every query step.
    logging.getLogger("lightrag").setLevel(logging.WARNING)


# nano-vectordb's version whose ``NanoVectorDB.get`` is replaced below (lightrag-hku 1.5.7's).
NANO_VECTORDB_VERSION = "0.0.4.3"


def _positions(table: Any, rows: list[dict[str, Any]]) -> dict[Any, int]:
    """The rows' positions by id, kept on the table. nano-vectordb changes its rows in two ways:
    an upsert replaces a row in its place (same id, same position) or appends, and a delete or a
    reload from disk puts a new row list in place. So appended rows are indexed as they come, and
    a new list is indexed whole."""
    from nano_vectordb.dbs import f_ID

    kept = getattr(table, "_memory_positions", None)
    if kept is None or kept[0] is not rows or len(rows) < kept[1]:
        kept = (rows, 0, {})
    positions = kept[2]
    for at in range(kept[1], len(rows)):
        positions[rows[at][f_ID]] = at
    table._memory_positions = (rows, len(rows), positions)
    return positions


def _rows_by_ids(self: Any, ids: list[str]) -> list[dict[str, Any]]:
    """``NanoVectorDB.get`` by the index of positions: the same rows, in the table's order."""
    rows = self._NanoVectorDB__storage["data"]
    positions = _positions(self, rows)
    return [rows[at] for at in sorted({positions[i] for i in set(ids) if i in positions})]


def indexed_get(on: bool = True) -> bool:
    """nano-vectordb's ``NanoVectorDB.get(ids)`` tests every stored row against the *list* of
    ids: rows × ids comparisons. Level 3 reads the chunks' vectors by id on every query (30-odd
    ids), so the query grew with the graph (at 50k notes the scans were a third of it);
    `bench/graph.py` prints level 3 both ways. With ``on`` the class gets ``_rows_by_ids``,
    without it its own ``get`` back (the bench's baseline). Only on the version it was read
    from: another keeps its own, and this says so. Returns whether the index is in use."""
    from importlib.metadata import version

    from nano_vectordb import dbs

    own = getattr(dbs.NanoVectorDB, "_library_get", None)
    if own is None:
        own = dbs.NanoVectorDB._library_get = dbs.NanoVectorDB.get
    installed = version("nano-vectordb")
    if on and installed != NANO_VECTORDB_VERSION:
        log.info("nano-vectordb %s: its own get is kept", installed)
        on = False
    dbs.NanoVectorDB.get = _rows_by_ids if on else own
    return on


class GraphCalledModel(MemoryServiceError):
    """The graph tried to call a model: a bug by definition (PASSPORT.md §13, level 3 costs
    no model call)."""

    code = "graph_called_model"
    status = 500


class Graph(Protocol):
    name: str

    def insert(
        self,
        *,
        architect_id: int,
        chunks: Sequence[Chunk],
        entities: Sequence[Entity],
        relations: Sequence[Relation],
    ) -> bool:
        """Write; True when this insert and every earlier one of the architect are saved
        (durable), False when they are findable but held in memory until ``save``."""
        ...

    def save(self, architect_id: int) -> None:
        """Make everything inserted for the architect durable."""
        ...

    def query(
        self,
        *,
        architect_id: int,
        question: str,
        hl_keywords: Sequence[str],
        ll_keywords: Sequence[str],
    ) -> GraphContext: ...


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


async def _embed(texts: list[str], context: str | None = None, **_: Any) -> Any:
    """LightRAG's embedding function. Everything is embedded as passages — the stored texts and
    a query's keywords alike (what level 3 was measured with); a query's (``context`` "query")
    are embedded at once for the caller who waits, not behind the stores' filling."""
    import numpy as np

    loop = asyncio.get_running_loop()
    e = embedder()
    fn = e.embed_documents_now if context == "query" else e.embed_documents
    return np.array(await loop.run_in_executor(None, fn, list(texts)), dtype="float32")


async def _no_model(*args: Any, **kwargs: Any) -> str:
    raise GraphCalledModel("the in-process graph tried to call a model; level 3 must not")


def _library_error(error: Exception, doing: str) -> GraphUnavailable:
    """LightRAG's own exceptions as the graph store's one error, classified: asking again with
    the same input cannot help when the library refused the input itself (a question too short
    to search, text it cannot store); it can when the library or its storage failed."""
    from lightrag.query_validation import QueryValidationError

    if isinstance(error, QueryValidationError):
        return GraphUnavailable(
            f"LightRAG refused the question: {error}", code="graph_refused", retryable=False
        )
    permanent = isinstance(error, ValueError | TypeError | UnicodeError)
    if not permanent:
        log.warning("the in-process graph failed while %s", doing, exc_info=error)
    return GraphUnavailable(
        f"LightRAG failed while {doing}: {type(error).__name__}: {error}",
        retryable=not permanent,
    )


def _held_rag_class() -> type:
    """LightRAG whose end-of-insert step may hold the work in memory: with ``memory_hold`` set,
    the vector storages embed and take in what was upserted (so a query finds it) and nothing is
    written to disk; without it, LightRAG's own step saves every storage. The vector part uses
    NanoVectorDBStorage's flush under its lock, as its own ``index_done_callback`` does
    (lightrag-hku is pinned in pyproject.toml; tests/stores/test_graph_save.py holds it)."""
    from lightrag import LightRAG

    class HeldLightRAG(LightRAG):  # type: ignore[misc]
        memory_hold = False

        async def _insert_done(self, pipeline_status=None, pipeline_status_lock=None):  # type: ignore[no-untyped-def]
            if not self.memory_hold:
                return await super()._insert_done(pipeline_status, pipeline_status_lock)
            for vdb in (self.entities_vdb, self.relationships_vdb, self.chunks_vdb):
                async with vdb._storage_lock:
                    await vdb._flush_pending_locked()
            return None

    return HeldLightRAG


def _disk_bytes(folder: Path) -> int:
    try:
        return sum(e.stat().st_size for e in os.scandir(folder) if e.is_file())
    except FileNotFoundError:
        return 0


# LightRAG's storages on PostgreSQL: key-value and document status in tables, vectors through
# pgvector, the graph in plain tables (no Apache AGE); each keyed by workspace.
POSTGRES_STORAGES = {
    "kv_storage": "PGKVStorage",
    "vector_storage": "PGVectorStorage",
    "graph_storage": "PGTableGraphStorage",
    "doc_status_storage": "PGDocStatusStorage",
}


def _postgres_environment(url: str) -> dict[str, str]:
    """LightRAG's PostgreSQL storages read their connection from POSTGRES_* variables: the
    database URL as those (a Unix-socket folder is a host too)."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        parts = conninfo_to_dict(url)
    except Exception as error:  # psycopg's ProgrammingError: the URL itself is wrong
        raise GraphUnavailable(
            f"GRAPH_DATABASE_URL is not a PostgreSQL URL: {error}", retryable=False
        ) from error
    return {
        "POSTGRES_HOST": str(parts.get("host") or "localhost"),
        "POSTGRES_PORT": str(parts.get("port") or 5432),
        "POSTGRES_USER": str(parts.get("user") or "postgres"),
        "POSTGRES_PASSWORD": str(parts.get("password") or ""),
        "POSTGRES_DATABASE": str(parts.get("dbname") or "postgres"),
    }


# LightRAG keeps each storage's data in a process-wide table keyed by workspace alone (not by
# folder): a workspace opened once is not read from its files again, so an engine over another
# folder (a settings change, a bench's second engine, the next test) would take in the previous
# engine's graph and save it as its own. The last engine to close releases that table
# (``finalize_share_data``, LightRAG's own call for it); the next one loads from its files. Two
# engines open at once over different folders would still share it: a process holds one.
_open_engines = 0
_open_engines_lock = threading.Lock()


class LocalLightRag:
    name = "lightrag-local"

    def __init__(self, *, working_dir: Path, embed: Embedder, database: str = "") -> None:
        self.working_dir = working_dir
        self.embed = embed
        self.database = database
        self.storages: dict[str, str] = {}
        if database:
            self.name = "lightrag-postgres"
            self.storages = POSTGRES_STORAGES
            os.environ.update(_postgres_environment(database))
        self._loop = _Loop()
        self._instances: dict[int, Any] = {}
        self._lock = threading.Lock()
        self._unsaved: dict[int, int] = {}  # inserts held in memory, per architect
        # One write at a time: the hold flag is the instance's, and a save must not run
        # between another insert's upserts and its end.
        self._writing = threading.Lock()
        global _open_engines
        with _open_engines_lock:
            _open_engines += 1
        self._closed = False

    def _workspace(self, architect_id: int) -> str:
        return f"architect-{architect_id}"

    def _instance(self, architect_id: int) -> Any:
        with self._lock:
            if architect_id not in self._instances:
                from lightrag.utils import EmbeddingFunc, Tokenizer

                _quiet_lightrag()
                indexed_get()
                self.working_dir.mkdir(parents=True, exist_ok=True)
                rag = _held_rag_class()(
                    working_dir=str(self.working_dir),
                    workspace=self._workspace(architect_id),
                    embedding_func=EmbeddingFunc(
                        embedding_dim=self.embed.dimension,
                        func=_embed,
                        # PostgreSQL's vector tables carry the model's name: another
                        # embedder's vectors never meet these (the files ignore it).
                        model_name=self.embed.name,
                        # LightRAG then says which calls are a query's (see _embed).
                        supports_asymmetric=True,
                    ),
                    llm_model_func=_no_model,
                    tokenizer=Tokenizer("memory-words", WordTokenizer()),
                    cosine_better_than_threshold=settings.GRAPH_COSINE_THRESHOLD,
                    # One embedding call at a time: the embedder's other model stays free for
                    # the vectors, which make a note findable first (the outbox's lanes).
                    embedding_func_max_async=1,
                    **self.storages,
                )
                self._loop.run(rag.initialize_storages(), timeout=60)
                self._instances[architect_id] = rag
            return self._instances[architect_id]

    def _call(self, architect_id: int, doing: str, work: Callable[[Any], Any]) -> Any:
        """Run one piece of LightRAG work in the architect's workspace; whatever the library
        raises leaves here as the store's own error (PASSPORT.md §14.4)."""
        try:
            return self._loop.run(
                work(self._instance(architect_id)), timeout=settings.GRAPH_TIMEOUT
            )
        except MemoryServiceError:
            raise  # already ours: a timeout, or the model function that must never run
        except Exception as error:
            raise _library_error(error, doing) from error

    def close(self) -> None:
        """Save and release every workspace, then stop the loop (once; a second call does
        nothing)."""
        if self._closed:
            return
        for architect_id in list(self._instances):
            self.save(architect_id)
        for rag in self._instances.values():
            self._loop.run(rag.finalize_storages(), timeout=60)
        self._instances.clear()
        self._loop.stop()
        global _open_engines
        with _open_engines_lock:
            self._closed = True
            _open_engines -= 1
            if _open_engines == 0:
                from lightrag.kg.shared_storage import finalize_share_data

                finalize_share_data()

    def _save_due(self, architect_id: int, inserts: int) -> bool:
        """Save now when a save's bytes (the workspace's files, rewritten whole), spread over
        the inserts it would make durable, come to GRAPH_SAVE_BYTES or less each."""
        waiting = self._unsaved.get(architect_id, 0) + inserts
        size = _disk_bytes(self.working_dir / self._workspace(architect_id))
        return waiting * settings.GRAPH_SAVE_BYTES >= size

    def save(self, architect_id: int) -> None:
        with self._writing:
            if not self._unsaved.get(architect_id):
                return
            self._call(architect_id, "saving", lambda rag: rag._insert_done())
            self._unsaved[architect_id] = 0

    def insert(self, *, architect_id, chunks, entities, relations) -> bool:  # type: ignore[no-untyped-def]
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
        inserts = max(1, len(chunks))
        with self._writing:
            # On PostgreSQL LightRAG's end-of-insert step writes the rows: nothing to hold.
            hold = not self.database and not self._save_due(architect_id, inserts)

            async def write(rag: Any) -> None:
                rag.memory_hold = hold
                try:
                    await rag.ainsert_custom_kg(custom_kg)
                finally:
                    rag.memory_hold = False

            self._call(architect_id, "writing", write)
            waiting = self._unsaved.get(architect_id, 0)
            self._unsaved[architect_id] = waiting + inserts if hold else 0
        return not hold

    def query(self, *, architect_id, question, hl_keywords, ll_keywords) -> GraphContext:  # type: ignore[no-untyped-def]
        from lightrag import QueryParam

        check_keywords(hl_keywords, ll_keywords)
        param = QueryParam(
            mode=QUERY_MODE,
            only_need_context=True,
            hl_keywords=list(hl_keywords),
            ll_keywords=list(ll_keywords),
            enable_rerank=False,
        )
        result = self._call(architect_id, "reading", lambda rag: rag.aquery_data(question, param))
        return context_from(result)


class DoorGraph:
    """The embedded graph seen from a process that does not own it: reads through the door."""

    name = "lightrag-door"

    def insert(self, **kwargs: Any) -> bool:
        raise GraphUnavailable(
            "graph writes go through the outbox, delivered by the process that holds the stores"
        )

    def save(self, architect_id: int) -> None:
        raise GraphUnavailable("the graph is saved by the process that holds the stores")

    def query(self, *, architect_id, question, hl_keywords, ll_keywords) -> GraphContext:  # type: ignore[no-untyped-def]
        check_keywords(hl_keywords, ll_keywords)
        found = door.client().graph_query(
            architect_id=architect_id,
            question=question,
            hl_keywords=hl_keywords,
            ll_keywords=ll_keywords,
        )
        try:
            return GraphContext(**found)
        except TypeError as error:
            raise GraphUnavailable(
                f"the internal door answered a graph query out of form: {error}", retryable=False
            ) from error


@lru_cache(maxsize=1)
def graph() -> Graph:
    if settings.LIGHTRAG_URL or settings.LIGHTRAG_URLS:
        return LightRagServer(
            urls=settings.LIGHTRAG_URLS,
            template=settings.LIGHTRAG_URL,
            api_key=settings.LIGHTRAG_API_KEY,
        )
    if settings.MEMORY_STORE_ACCESS == "door":
        return DoorGraph()
    return LocalLightRag(
        working_dir=settings.MEMORY_STORES_DIR / "lightrag",
        embed=embedder(),
        database=settings.GRAPH_DATABASE_URL,
    )
