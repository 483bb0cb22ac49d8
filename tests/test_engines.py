"""Which deployments keep the stores inside one process: the one rule the settings' start check
and the outbox's holder both read (memory.engines)."""

from __future__ import annotations

import pytest

from memory.engines import stores_embedded


@pytest.mark.parametrize(
    ("qdrant", "lightrag", "lightrag_urls", "graph_db", "embedded"),
    [
        ("", "", {}, "", True),  # the defaults: local Qdrant, LightRAG on files
        ("http://q:6333", "", {}, "", True),  # the graph still on files in one process
        ("", "", {}, "postgres://db/m", True),  # local Qdrant still locks its folder
        ("http://q:6333", "http://lr-{architect}:9621", {}, "", False),
        ("http://q:6333", "", {"1": "http://lr:9621"}, "", False),
        ("http://q:6333", "", {}, "postgres://db/m", False),  # every process reaches both
    ],
)
def test_the_stores_are_embedded_unless_every_process_can_reach_both(
    qdrant, lightrag, lightrag_urls, graph_db, embedded
):
    assert (
        stores_embedded(
            qdrant_url=qdrant,
            lightrag_url=lightrag,
            lightrag_urls=lightrag_urls,
            graph_database_url=graph_db,
        )
        is embedded
    )
