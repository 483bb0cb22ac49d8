"""The stores behind the contract, each behind a narrow interface with an embedded default and a
production engine: embeddings, vectors (Qdrant), the knowledge graph (LightRAG), objects."""


def reset() -> None:
    """Close the engines this process holds and forget them (tests, and settings changes)."""
    from memory.stores import door, graph, vectors

    for factory in (vectors.vectors, graph.graph):
        if factory.cache_info().currsize:
            engine = factory()
            close = getattr(engine, "close", None)
            if close is not None:
                close()
        factory.cache_clear()
    door.client.cache_clear()
