"""The in-process graph saves by cost, and the outbox keeps what it holds until it is saved.

An insert is findable at once; its files are rewritten only when a save's bytes, spread over the
inserts it makes durable, come to GRAPH_SAVE_BYTES or less each. Until then its outbox items are
``held``: saved → ``done``; the process gone (kill -9) → queued again by the next holder and
delivered again, so nothing is lost. The disk is read directly (LightRAG's chunk file), as the
crash test does: that is what survives a kill."""

from __future__ import annotations

import json

import pytest

from memory.models import Note, OutboxItem
from memory.stores import graph as graph_module
from memory.stores import outbox
from memory.stores.embeddings import embedder
from memory.stores.graph import LocalLightRag
from memory.stores.graph_types import Chunk, Entity, note_chunk_id


def _on_disk(folder, architect_id: int) -> set[str]:
    """The sources of the chunks in the workspace's chunk file (our chunk ids): what a process
    that died would leave."""
    path = folder / f"architect-{architect_id}" / "kv_store_text_chunks.json"
    chunks = json.loads(path.read_text()) if path.exists() else {}
    return {c.get("source_id", "") for c in chunks.values()}


def _insert(engine, who: str) -> tuple[bool, str]:
    chunk = Chunk(id=f"note-{who}", content=f"Мой сосед {who} чинит велосипеды во дворе.")
    saved = engine.insert(
        architect_id=1,
        chunks=[chunk],
        entities=[Entity(who, "person", source=chunk.id)],
        relations=[],
    )
    return saved, chunk.id


def _chunks_found(engine, who: str) -> list[str]:
    found = engine.query(
        architect_id=1, question=f"Кто такой {who}?", hl_keywords=["сосед"], ll_keywords=[who]
    )
    return [c["content"] for c in found.chunks]


@pytest.fixture
def local(tmp_path):
    engine = LocalLightRag(working_dir=tmp_path / "lightrag", embed=embedder())
    yield engine
    engine.close()


def test_a_held_insert_is_findable_at_once_and_on_disk_only_once_saved(local, tmp_path, settings):
    folder = tmp_path / "lightrag"
    settings.GRAPH_SAVE_BYTES = 1  # any save costs more than one byte an insert: hold
    first, _ = _insert(local, "Аркадий")
    assert first is True  # an empty workspace costs nothing to save
    saved, chunk_id = _insert(local, "Болеслав")
    assert saved is False
    assert any("Болеслав" in c for c in _chunks_found(local, "Болеслав"))  # in memory: found
    assert chunk_id not in _on_disk(folder, 1)  # ...and not written
    local.save(1)
    assert chunk_id in _on_disk(folder, 1)


def test_the_save_rule_spreads_a_save_over_the_inserts_it_covers(local, tmp_path, settings):
    folder = tmp_path / "lightrag"
    _insert(local, "Аркадий")
    size = graph_module._disk_bytes(folder / "architect-1")
    assert size > 0
    # A budget of a third of the files an insert: the third insert held pays for the save.
    settings.GRAPH_SAVE_BYTES = size // 3 + 1
    verdicts = [_insert(local, name)[0] for name in ("Борис", "Вадим", "Глеб")]
    assert verdicts == [False, False, True]
    assert {"note-Борис", "note-Вадим", "note-Глеб"} <= _on_disk(folder, 1)


def test_closing_the_engine_saves_what_it_holds(tmp_path, settings):
    settings.GRAPH_SAVE_BYTES = 1
    engine = LocalLightRag(working_dir=tmp_path / "lightrag", embed=embedder())
    _insert(engine, "Аркадий")
    _, chunk_id = _insert(engine, "Болеслав")
    engine.close()
    assert chunk_id in _on_disk(tmp_path / "lightrag", 1)


def test_an_engine_over_another_folder_holds_only_that_folders_graph(tmp_path):
    # LightRAG keys its in-memory storages by workspace alone: before the engine released them on
    # close, this second engine saved the first one's three neighbours into its own folder (and
    # a test after another that had used the same architect id saw a graph it never wrote).
    first = LocalLightRag(working_dir=tmp_path / "first", embed=embedder())
    for who in ("Аркадий", "Борис", "Вадим"):
        _insert(first, who)
    first.close()
    second = LocalLightRag(working_dir=tmp_path / "second", embed=embedder())
    try:
        _insert(second, "Глеб")
        second.save(1)
        assert _on_disk(tmp_path / "second", 1) == {"note-Глеб"}
    finally:
        second.close()
    again = LocalLightRag(working_dir=tmp_path / "first", embed=embedder())
    try:  # ...and the first folder still opens with its own graph, read from its files
        assert any("Вадим" in c for c in _chunks_found(again, "Вадим"))
        assert not any("Глеб" in c for c in _chunks_found(again, "Глеб"))
    finally:
        again.close()


def test_on_postgresql_every_insert_is_written_at_once(tmp_path, settings, graph_database):
    settings.GRAPH_SAVE_BYTES = 1  # a budget the files would hold every insert for
    engine = LocalLightRag(
        working_dir=tmp_path / "lightrag", embed=embedder(), database=graph_database
    )
    try:
        assert [_insert(engine, who)[0] for who in ("Аркадий", "Болеслав")] == [True, True]
    finally:
        engine.close()
    again = LocalLightRag(
        working_dir=tmp_path / "lightrag", embed=embedder(), database=graph_database
    )
    try:
        assert any("Болеслав" in c for c in _chunks_found(again, "Болеслав"))
    finally:
        again.close()


@pytest.mark.django_db
def test_held_items_are_done_once_saved_and_delivered_again_after_a_crash(
    alice, alice_api, settings
):
    settings.GRAPH_SAVE_BYTES = 1
    settings.GRAPH_SAVE_SECONDS = 3600  # no idle save inside this test
    folder = settings.MEMORY_STORES_DIR / "lightrag"
    for text in (
        "Мой сосед Аркадий чинит велосипеды",
        "Моя коллега Вера Лебедева ведёт бухгалтерию",
        "Мой тренер Геннадий Орлов работает в бассейне «Чайка»",
    ):
        answer = alice_api.remember(text)
        assert answer["stores"]["graph"]["status"] == "written"  # findable: delivered
    graph_items = OutboxItem.objects.filter(architect=alice, store="graph").order_by("pk")
    statuses = list(graph_items.values_list("status", flat=True))
    assert statuses[0] == "done" and set(statuses[1:]) == {"held"}
    last = Note.objects.filter(architect=alice).order_by("-created_at").first()
    assert note_chunk_id(last.pk) not in _on_disk(folder, alice.pk)

    # kill -9: the memory that held them is gone; the next holder queues them again...
    assert outbox.recover_held() == 2
    assert set(graph_items.values_list("status", flat=True)) == {"done", "queued"}
    delivered = []
    for _ in range(10):  # a round may leave a graph item to the next (GRAPH_ROUND_SECONDS)
        result = outbox.drain()
        assert not result.dead
        delivered += result.delivered
        if not graph_items.filter(status="queued").exists():
            break
    assert len(delivered) == 2

    # ...and a save (here: the process leaving, gunicorn's worker_exit) makes them done.
    assert outbox.save_held() == 2
    assert set(graph_items.values_list("status", flat=True)) == {"done"}
    assert note_chunk_id(last.pk) in _on_disk(folder, alice.pk)


@pytest.mark.django_db
def test_a_drain_with_no_graph_work_saves_what_was_held_long_enough(alice, alice_api, settings):
    settings.GRAPH_SAVE_BYTES = 1
    settings.GRAPH_SAVE_SECONDS = 3600
    alice_api.remember("Мой сосед Аркадий чинит велосипеды")
    alice_api.remember("Моя коллега Вера Лебедева ведёт бухгалтерию")
    held = OutboxItem.objects.filter(architect=alice, store="graph", status="held")
    assert held.count() == 1
    outbox.drain()
    assert held.count() == 1  # held for less than GRAPH_SAVE_SECONDS: kept in memory
    settings.GRAPH_SAVE_SECONDS = 0
    outbox.drain()
    assert held.count() == 0
    assert set(
        OutboxItem.objects.filter(architect=alice, store="graph").values_list("status", flat=True)
    ) == {"done"}
