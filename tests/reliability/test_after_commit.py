"""After the note is committed nothing turns the answer into a 500: a later failure is reported
in its own part of the answer and on the run (PASSPORT.md §14.2). One level's fault never sinks a
recall either."""

from __future__ import annotations

import pytest

from memory.knowledge import fill
from memory.models import Note, OutboxItem, Run
from memory.stores import graph as graph_store
from memory.stores import outbox

pytestmark = pytest.mark.django_db

FACT = "Мой коллега Антон Петров живёт в Казани"


def test_a_graph_that_breaks_on_delivery_is_reported_failed_and_the_note_is_kept(
    alice_api, monkeypatch
):
    def broken(**kwargs):
        raise ValueError("the library choked on this text")

    monkeypatch.setattr(graph_store.graph(), "insert", broken)
    stored = alice_api.remember(FACT)
    assert stored["stores"]["vectors"]["status"] == "written"
    graph = stored["stores"]["graph"]
    assert graph["status"] == "failed" and "ValueError" in graph["note"]
    assert Note.objects.filter(pk=stored["stored"]["note"]).exists()
    run = Run.objects.get(pk=stored["run"])
    assert run.status == "done" and "graph" in run.error and "ValueError" in run.error
    assert OutboxItem.objects.get(run=run, store="graph").status == "dead"


def test_a_delivery_that_cannot_even_start_leaves_the_items_queued(alice_api, monkeypatch):
    def unreachable(**kwargs):
        raise RuntimeError("the owner of the stores is restarting")

    monkeypatch.setattr(outbox, "drain", unreachable)
    stored = alice_api.remember(FACT)
    assert stored["stores"]["vectors"]["status"] == "queued"
    assert "restarting" in stored["stores"]["vectors"]["note"]
    # The note's vector, its vector in context, and its graph insert.
    assert OutboxItem.objects.filter(status="queued").count() == 3
    assert Run.objects.get(pk=stored["run"]).status == "done"


def test_queuing_the_graph_after_the_model_step_can_fail_without_a_500(
    alice_api, monkeypatch, settings
):
    def broken(**kwargs):
        raise RuntimeError("database is locked")

    monkeypatch.setattr(fill, "writes_to_graph", broken)
    stored = alice_api.remember(FACT)
    assert stored["stores"]["vectors"]["status"] == "written"
    assert stored["stores"]["graph"]["status"] == "failed"
    assert "database is locked" in stored["stores"]["graph"]["note"]
    assert Run.objects.get(pk=stored["run"]).error.count("database is locked") >= 1


def test_closing_the_run_can_fail_without_a_500(alice_api, monkeypatch):
    from memory.services import remember as remember_module

    def broken(*args, **kwargs):
        raise RuntimeError("database is locked")

    monkeypatch.setattr(remember_module, "run_close", broken)
    stored = alice_api.remember(FACT)
    assert stored["stored"]["note"]
    assert Note.objects.count() == 1


def test_a_level_that_raises_is_a_failed_entry_and_the_climb_goes_on(alice_api, monkeypatch):
    from memory.levels import relational

    alice_api.remember(FACT)

    def broken(ctx):
        raise RuntimeError("a bug in level 1")

    monkeypatch.setattr(relational, "search", broken)
    answer = alice_api.recall("Где живёт Антон Петров?", depth="deep")
    level1 = [e for e in answer["report"] if e["level"] == 1]
    assert level1 == [
        {
            "level": 1,
            "store": "tables",
            "source": "tables",
            "status": "failed",
            "returned": 0,
            "kind": None,
            "note": "RuntimeError: a bug in level 1",
        }
    ]
    assert answer["depth_used"] >= 3
    assert Run.objects.get(pk=answer["run"]).status == "done"
