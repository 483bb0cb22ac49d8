"""The memory against REAL lightrag-server processes (one per architect), with an
OpenAI-compatible stub for the server's model and embeddings that logs every request."""

from __future__ import annotations

import time

import httpx
import pytest

from memory import stores
from memory.models import OutboxItem
from memory.tasks import outbox_replay

pytestmark = [
    pytest.mark.slow,
    pytest.mark.lightrag_server,
    pytest.mark.django_db(transaction=True),
]

FACT = "Мой брат Антон работает хирургом в областной больнице."
SECOND = "Моя дочь Вера учится играть на виолончели."
# No single note holds this question past level 1's answer bar; the graph joins the two people.
QUESTION = "Где работает Антон и на чём учится играть Вера?"


def settle(server) -> None:
    """Wait until the server has finished the asynchronous text inserts (its own model work)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = httpx.get(
            f"{server.url}/documents/pipeline_status", headers=server.headers, timeout=10
        ).json()
        if not status.get("busy"):
            return
        time.sleep(0.2)
    raise AssertionError("the server's pipeline stayed busy")


@pytest.fixture
def on_servers(settings):
    def point(mapping: dict[str, object], api_key: str) -> None:
        stores.reset()
        settings.LIGHTRAG_URLS = {name: server.url for name, server in mapping.items()}
        settings.LIGHTRAG_API_KEY = api_key
        stores.reset()

    yield point
    stores.reset()


def test_remember_and_level_3_on_the_server_make_no_model_call(
    lightrag_server, on_servers, alice, client_for
):
    on_servers({"alice": lightrag_server}, lightrag_server.api_key)
    api = client_for(alice)
    calls_before = lightrag_server.llm_calls()
    for fact in (FACT, SECOND):
        stored = api.remember(fact)
        assert stored["stores"]["graph"]["status"] == "written"
    settle(lightrag_server)
    # A remember costs the server 0 model calls: the code's entities go through its graph
    # endpoints, never through /documents/text (which would extract with its model).
    assert lightrag_server.llm_calls() == calls_before
    answer = api.recall(QUESTION)
    assert answer["depth_used"] == 3
    assert answer["answer"]["found"] is True
    graph_note = [e for e in answer["report"] if e["level"] == 3][0]["note"]
    assert "Антон" in graph_note and "Вера" in graph_note
    assert lightrag_server.llm_calls() == calls_before  # zero model calls at level 3
    assert lightrag_server.embedding_calls() > 0


def test_each_architect_has_their_own_server_and_sees_only_it(
    lightrag_server_factory, on_servers, alice, bob, client_for
):
    alices, bobs = (
        lightrag_server_factory(),
        lightrag_server_factory(api_key=None or "test-lightrag-key"),
    )
    on_servers({"alice": alices, "bob": bobs}, alices.api_key)
    client_for(alice).remember(FACT)
    settle(alices)
    assert client_for(bob).recall(QUESTION)["answer"]["found"] is False
    entities = httpx.get(f"{bobs.url}/graph/label/list", headers=bobs.headers, timeout=10).json()
    assert "Антон" not in entities


def test_an_architect_with_no_server_is_refused_not_sent_elsewhere(
    lightrag_server, on_servers, alice, bob, client_for
):
    on_servers({"alice": lightrag_server}, lightrag_server.api_key)
    stored = client_for(bob).remember(FACT)
    # A permanent refusal: the item is set aside as dead with the reason (staff requeue it once
    # bob has a server), never retried against someone else's graph.
    assert stored["stores"]["graph"]["status"] == "failed"
    assert "no LightRAG server for architect" in stored["stores"]["graph"]["note"]
    dead = OutboxItem.objects.get(run_id=stored["run"], store="graph")
    assert dead.status == "dead" and "no LightRAG server" in dead.last_error


def test_with_the_server_down_the_graph_write_is_queued_and_replayed_when_it_is_back(
    lightrag_server, on_servers, alice, client_for
):
    on_servers({"alice": lightrag_server}, lightrag_server.api_key)
    api = client_for(alice)
    lightrag_server.stop()
    for fact in (FACT, SECOND):
        stored = api.remember(fact)
        assert stored["stores"]["graph"]["status"] == "queued"
        assert stored["stores"]["vectors"]["status"] == "written"
    queued = list(OutboxItem.objects.filter(status="queued").order_by("pk"))
    assert [q.store for q in queued] == ["graph", "graph"]
    assert all(q.attempts == 1 and q.last_error for q in queued)

    lightrag_server.start()
    OutboxItem.objects.update(next_attempt_at=queued[0].created_at)  # due now, not after backoff
    result = outbox_replay.apply().get()
    assert sorted(result["delivered"]) == [q.pk for q in queued]
    assert all(OutboxItem.objects.get(pk=q.pk).status == "done" for q in queued)
    settle(lightrag_server)
    answer = api.recall(QUESTION)
    assert answer["depth_used"] == 3 and answer["answer"]["found"] is True  # nothing was lost


def test_a_thing_named_by_two_notes_keeps_both_as_its_sources(
    lightrag_server, on_servers, alice, client_for
):
    from memory.stores.graph import graph

    on_servers({"alice": lightrag_server}, lightrag_server.api_key)
    api = client_for(alice)
    calls_before = lightrag_server.llm_calls()
    first = api.remember(FACT)["stored"]["note"]
    second = api.remember("Мой брат Антон живёт в Казани с женой.")["stored"]["note"]
    context = graph().query(
        architect_id=alice.pk, question="Антон", hl_keywords=["брат"], ll_keywords=["Антон"]
    )
    (anton,) = [e for e in context.entities if e["name"] == "Антон"]
    assert anton["sources"] == [f"note-{first}", f"note-{second}"]  # merged, not refused
    texts = {c["source"]: c["content"] for c in context.chunks}
    assert texts[f"note-{first}"] == FACT  # the text comes back from the memory
    assert "Казани" in texts[f"note-{second}"]
    assert lightrag_server.llm_calls() == calls_before
