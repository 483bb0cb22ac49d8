"""Which engines a deployment names, decided once: read by the settings (a door process without
the door's address must not start) and by the stores (who may deliver the outbox)."""

from __future__ import annotations


def stores_embedded(
    *, qdrant_url: str, lightrag_url: str, lightrag_urls: object, graph_database_url: str
) -> bool:
    """True when the vectors or the graph run inside one process (local Qdrant, in-process
    LightRAG on files): the others reach them through the internal door. A Qdrant server and a
    graph that every process reaches (LightRAG servers, or LightRAG on PostgreSQL) are not."""
    graph_served = bool(lightrag_url or lightrag_urls or graph_database_url)
    return not (qdrant_url and graph_served)
