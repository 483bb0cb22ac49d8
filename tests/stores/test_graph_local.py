"""LightRAG in-process: our embedder, our tokenizer, a model function that raises. The same
contract on its two storages: files under the stores folder (the embedded default) and
PostgreSQL with pgvector (GRAPH_DATABASE_URL; a server from a wheel, tests/stores/conftest.py)."""

from __future__ import annotations

import pytest

from memory.errors import MemoryServiceError
from memory.stores import graph as graph_module
from memory.stores.embeddings import embedder
from memory.stores.graph import LocalLightRag
from memory.stores.graph_types import Chunk, Entity, GraphUnavailable, Relation


@pytest.fixture
def model_calls(monkeypatch):
    """Every call LightRAG makes to its model function (which raises, as in production). Set
    before a workspace is opened: LightRAG binds the function when it builds an instance."""
    calls: list[str] = []
    refuse = graph_module._no_model

    async def spy(*args, **kwargs):
        calls.append(str(args[0])[:80] if args else "")
        return await refuse(*args, **kwargs)

    monkeypatch.setattr(graph_module, "_no_model", spy)
    return calls


@pytest.fixture(params=["files", "postgres"])
def database(request):
    """'' for the file storages, or a fresh PostgreSQL database's URL."""
    return request.getfixturevalue("graph_database") if request.param == "postgres" else ""


@pytest.fixture
def local(tmp_path, model_calls, database):
    engine = LocalLightRag(working_dir=tmp_path / "lightrag", embed=embedder(), database=database)
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


def test_a_query_with_code_built_keywords_calls_no_model(local, model_calls):
    _fill(local, 1, "Денис")
    found = local.query(
        architect_id=1, question="Где служил Денис?", hl_keywords=["служба"], ll_keywords=["Денис"]
    )
    assert {e["name"] for e in found.entities} >= {"Денис", "Кремль"}
    assert any(r["description"] == "служил с 1992 по 1994" for r in found.relations)
    assert found.chunks[0]["content"].startswith("Мой друг Денис")
    assert model_calls == []  # the raising model function never ran


def test_the_model_spy_sees_a_query_left_to_extract_its_own_keywords(local, model_calls):
    """The check above can fail: the same workspace asked WITHOUT code-built keywords (our
    check bypassed) makes LightRAG reach for its model, and the spy sees it."""
    from lightrag import QueryParam

    _fill(local, 1, "Денис")
    param = QueryParam(mode="mix", only_need_context=True, enable_rerank=False)
    try:
        local._call(1, "reading", lambda rag: rag.aquery_data("Где служил Денис?", param))
    except MemoryServiceError:
        pass  # LightRAG may give up once the model function refuses; the call is what counts
    assert model_calls


@pytest.mark.parametrize("question", ["ok", "a", "?", "ок"])
def test_a_question_the_library_refuses_is_the_stores_own_error_and_not_retryable(local, question):
    _fill(local, 1, "Денис")
    with pytest.raises(GraphUnavailable) as refused:
        local.query(architect_id=1, question=question, hl_keywords=["ok"], ll_keywords=["ok"])
    assert refused.value.code == "graph_refused"
    assert refused.value.retryable is False
    assert "too short" in refused.value.message


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
    # Each finds what was written into their own workspace: entity, relation (LightRAG keeps
    # relations undirected) and chunk...
    assert "Денис" in {e["name"] for e in alice.entities}
    assert {"Денис", "Кремль"} in [{r["source"], r["target"]} for r in alice.relations]
    assert any(c["content"].startswith("Мой друг Денис") for c in alice.chunks)
    assert "Пётр" in {e["name"] for e in bob.entities}
    assert {"Пётр", "Кремль"} in [{r["source"], r["target"]} for r in bob.relations]
    assert any(c["content"].startswith("Мой друг Пётр") for c in bob.chunks)
    # ...and nothing from the other's.
    assert "Пётр" not in {e["name"] for e in alice.entities}
    assert "Денис" not in {e["name"] for e in bob.entities}
    assert not any("Пётр" in c["content"] for c in alice.chunks)
    assert not any("Денис" in c["content"] for c in bob.chunks)


def test_the_graph_survives_a_restart(tmp_path, database):
    first = LocalLightRag(working_dir=tmp_path / "lightrag", embed=embedder(), database=database)
    _fill(first, 1, "Денис")
    first.close()
    again = LocalLightRag(working_dir=tmp_path / "lightrag", embed=embedder(), database=database)
    try:
        found = again.query(
            architect_id=1,
            question="Где служил Денис?",
            hl_keywords=["служба"],
            ll_keywords=["Денис"],
        )
        assert "Денис" in {e["name"] for e in found.entities}
        assert any(r["description"] == "служил с 1992 по 1994" for r in found.relations)
        assert found.chunks and found.chunks[0]["content"].startswith("Мой друг Денис")
    finally:
        again.close()


def test_a_thing_named_again_costs_no_embedding_only_the_new_note_does(tmp_path):
    """An entity is embedded by its name (fill.entities_of): the second note naming the same
    person costs the embedder its own chunk alone (the embedder keeps recent vectors)."""
    import uuid

    from memory.knowledge.fill import entities_of

    engine = LocalLightRag(working_dir=tmp_path / "lightrag", embed=embedder())
    counts = embedder().counts["passage"]
    mark = uuid.uuid4().hex[:8]
    try:
        computed = []
        for n, text in enumerate(
            [f"Мой друг Дима Волков ({mark}) живёт в Казани", f"Дима Волков ({mark}) сменил работу"]
        ):
            chunk = Chunk(id=f"note-{mark}-{n}", content=text)
            named = {"entities": [{"name": "Дима Волков", "type": "person"}]}
            before = counts[1]
            engine.insert(
                architect_id=1, chunks=[chunk], entities=entities_of(named, chunk), relations=[]
            )
            computed.append(counts[1] - before)
        assert computed[1] == 1  # the new chunk; the name's vector was already there
    finally:
        engine.close()


@pytest.fixture
def nano(tmp_path):
    """A nano-vectordb table of 200 rows, the library's own ``get`` kept beside it."""
    import numpy as np
    from nano_vectordb import NanoVectorDB

    table = NanoVectorDB(4, storage_file=str(tmp_path / "rows.json"))
    vectors = np.random.default_rng(7).random((200, 4))
    table.upsert([{"__id__": f"chunk-{i}", "n": i, "__vector__": v} for i, v in enumerate(vectors)])
    graph_module.indexed_get(True)
    yield table
    graph_module.indexed_get(True)  # what an engine sets when it opens a workspace


def test_the_indexed_get_returns_the_librarys_rows_in_its_order(nano):
    from nano_vectordb import NanoVectorDB

    own = NanoVectorDB._library_get
    for ids in (
        ["chunk-5", "chunk-150", "chunk-7"],  # the table's order back, not the asked one
        ["chunk-9", "chunk-9", "gone", "chunk-0"],  # a repeat and an id the table lacks
        [],
        [f"chunk-{i}" for i in range(0, 200, 3)],
    ):
        assert nano.get(ids) == own(nano, ids)
        assert [row["n"] for row in nano.get(ids)] == sorted({row["n"] for row in nano.get(ids)})


def test_the_indexed_get_follows_upserts_and_deletes(nano):
    import numpy as np
    from nano_vectordb import NanoVectorDB

    own = NanoVectorDB._library_get
    asked = ["chunk-3", "chunk-120", "chunk-199", "chunk-200", "chunk-201"]
    assert nano.get(asked) == own(nano, asked)  # the index is built here
    vectors = np.random.default_rng(8).random((3, 4))
    # one replaced in its place, two appended
    nano.upsert(
        [{"__id__": i, "n": -1, "__vector__": v} for i, v in zip(asked[2:], vectors, strict=True)]
    )
    assert nano.get(asked) == own(nano, asked)
    assert [row["n"] for row in nano.get(asked)] == [3, 120, -1, -1, -1]
    nano.delete(["chunk-3", "chunk-200"])  # a new row list: every position moved
    assert nano.get(asked) == own(nano, asked)
    assert [row["__id__"] for row in nano.get(asked)] == ["chunk-120", "chunk-199", "chunk-201"]


def test_an_engine_reads_rows_by_their_positions_and_the_bench_can_turn_it_off(local, nano):
    from nano_vectordb import NanoVectorDB

    _fill(local, 1, "Денис")  # opening a workspace sets it
    assert NanoVectorDB.get is graph_module._rows_by_ids
    assert graph_module.indexed_get(False) is False
    assert NanoVectorDB.get is NanoVectorDB._library_get


def test_another_nano_vectordb_keeps_its_own_get(nano, monkeypatch):
    from nano_vectordb import NanoVectorDB

    monkeypatch.setattr("importlib.metadata.version", lambda name: "9.9.9")
    assert graph_module.indexed_get(True) is False
    assert NanoVectorDB.get is NanoVectorDB._library_get
