"""The stores behind the contract, each behind a narrow interface with an embedded default and a
production engine: embeddings, vectors (Qdrant), the knowledge graph (LightRAG), objects."""

from __future__ import annotations

from django.conf import settings

from memory.engines import stores_embedded


def embedded() -> bool:
    """True when the vectors or the graph run inside a process (``engines.stores_embedded``):
    then one process owns them and the others go through the internal door."""
    return stores_embedded(
        qdrant_url=settings.QDRANT_URL,
        lightrag_url=settings.LIGHTRAG_URL,
        lightrag_urls=settings.LIGHTRAG_URLS,
        graph_database_url=settings.GRAPH_DATABASE_URL,
    )


def reset() -> None:
    """Close the engines this process holds and forget them (tests, and settings changes)."""
    # the engines' modules load their libraries (Qdrant, LightRAG): only when asked
    from memory.stores import door, graph, vectors

    for factory in (vectors.vectors, graph.graph):
        if factory.cache_info().currsize:
            engine = factory()
            close = getattr(engine, "close", None)
            if close is not None:
                close()
        factory.cache_clear()
    door.client.cache_clear()


def warm() -> None:
    """Load what the first request would otherwise wait for: the embedder, the morphology, the
    NER models, the graph and vector engines (seconds on a cold process)."""
    # the libraries load here on purpose: warming up is what this is for
    from memory import language, ner
    from memory.stores import embeddings, graph, vectors

    embeddings.embedder().embed_query(["прогрев"])
    language.keywords("друзья")
    ner.entities("Мой друг Дима из Москвы")
    vectors.vectors()
    graph.graph()
    import lightrag  # noqa: F401 - the import alone takes seconds
