"""LightRAG in-process: our embedder, our tokenizer, a model function that raises."""

from __future__ import annotations

import pytest

from memory.errors import MemoryServiceError
from memory.stores import graph as graph_module
from memory.stores.embeddings import embedder
from memory.stores.graph import Chunk, Entity, LocalLightRag, Relation


@pytest.fixture
def local(tmp_path):
    engine = LocalLightRag(working_dir=tmp_path / "lightrag", embed=embedder())
    yield engine
    engine.close()


def _fill(engine, architect_id, who):
    chunk = Chunk(id=f"note-{who}", content=f"Мой друг {who} служил в Кремле с 1992 по 1994 год.")
    engine.insert(
        architect_id=architect_id,
        chunks=[chunk],
        entities=[
            Entity(who, "person", source=chunk.id),
            Entity("Кремль", "place", source=chunk.id),
        ],
        relations=[Relation(who, "Кремль", "служил с 1992 по 1994", "служба", chunk.id)],
    )


def test_a_query_with_code_built_keywords_calls_no_model(local):
    before = graph_module.MODEL_CALLS["count"]
    _fill(local, 1, "Денис")
    found = local.query(
        architect_id=1, question="Где служил Денис?", hl_keywords=["служба"], ll_keywords=["Денис"]
    )
    assert {e["name"] for e in found.entities} >= {"Денис", "Кремль"}
    assert any(r["description"] == "служил с 1992 по 1994" for r in found.relations)
    assert found.chunks[0]["content"].startswith("Мой друг Денис")
    assert graph_module.MODEL_CALLS["count"] == before  # the raising model function never ran


def test_a_query_without_both_keyword_lists_is_refused_before_the_graph(local):
    with pytest.raises(MemoryServiceError, match="both hl_keywords and ll_keywords"):
        local.query(
            architect_id=1, question="Где служил Денис?", hl_keywords=[], ll_keywords=["Денис"]
        )


def test_each_architect_has_a_workspace_of_their_own(local):
    _fill(local, 1, "Денис")
    _fill(local, 2, "Пётр")
    alice = local.query(
        architect_id=1, question="Кто служил?", hl_keywords=["служба"], ll_keywords=["служил"]
    )
    bob = local.query(
        architect_id=2, question="Кто служил?", hl_keywords=["служба"], ll_keywords=["служил"]
    )
    assert "Пётр" not in {e["name"] for e in alice.entities}
    assert "Денис" not in {e["name"] for e in bob.entities}


def test_the_graph_survives_a_restart(tmp_path):
    first = LocalLightRag(working_dir=tmp_path / "lightrag", embed=embedder())
    _fill(first, 1, "Денис")
    first.close()
    again = LocalLightRag(working_dir=tmp_path / "lightrag", embed=embedder())
    try:
        found = again.query(
            architect_id=1,
            question="Где служил Денис?",
            hl_keywords=["служба"],
            ll_keywords=["Денис"],
        )
        assert "Денис" in {e["name"] for e in found.entities}
    finally:
        again.close()
