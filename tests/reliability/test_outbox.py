"""The outbox keeps "nothing is lost": one transaction with the note, every delivery error
classified, a dead item never blocking another item or tenant, retries without a cap, and a
periodic sweep that replays what a restart left queued (PASSPORT.md §14.1)."""

from __future__ import annotations

import socket
from datetime import timedelta

import pytest
from django.utils import timezone

from memory.errors import MemoryServiceError
from memory.knowledge import fill
from memory.models import Note, NoteKeyword, OutboxItem, Run
from memory.services import runs
from memory.stores import outbox
from memory.stores.vectors import VectorItem, VectorsUnavailable, vectors
from memory.tasks import sweep

pytestmark = pytest.mark.django_db


def _vector_item(architect, text: str) -> OutboxItem:
    note = Note.objects.create(architect=architect, text=text, sender="t")
    return outbox.vectors_add(
        architect=architect,
        kind="notes",
        items=[VectorItem(id=str(note.pk), text=text, payload={"note": str(note.pk)})],
        run=None,
    )


def test_the_note_its_lemmas_and_its_outbox_rows_commit_together_or_not_at_all(
    alice_api, monkeypatch
):
    def broken(**kwargs):
        raise RuntimeError("the disk is full")

    monkeypatch.setattr(fill.outbox, "vectors_add", broken)
    with pytest.raises(RuntimeError):
        alice_api.remember("Мой друг Антон Петров живёт в Казани")
    assert Note.objects.count() == 0
    assert NoteKeyword.objects.count() == 0
    assert Run.objects.count() == 0
    assert OutboxItem.objects.count() == 0


def test_a_remembered_note_has_its_rows_in_the_outbox_and_they_are_delivered(alice_api):
    stored = alice_api.remember("Мой коллега Антон Петров живёт в Казани")
    items = OutboxItem.objects.filter(run_id=stored["run"])
    assert sorted(items.values_list("store", flat=True)) == ["graph", "vectors", "vectors"]
    kinds = sorted(i.payload["kind"] for i in items.filter(store="vectors"))
    assert kinds == ["context", "notes"]  # the note alone, and read after the note before it
    assert set(items.values_list("status", flat=True)) == {"done"}
    assert stored["stores"]["vectors"] == {"status": "written", "items": 2}
    assert stored["stores"]["graph"] == {"status": "written", "items": 1}


def test_an_item_that_raises_an_unexpected_error_is_dead_and_blocks_no_one(alice, bob, monkeypatch):
    poisoned = _vector_item(alice, "poison")
    fine_alice = _vector_item(alice, "Мой брат Антон работает хирургом")
    fine_bob = _vector_item(bob, "Моя сестра Анна работает врачом")
    real_add = vectors().add

    def add(*, kind, architect_id, items):
        if items[0].text == "poison":
            raise ValueError("a character the engine cannot take")
        return real_add(kind=kind, architect_id=architect_id, items=items)

    monkeypatch.setattr(vectors(), "add", add)
    result = outbox.drain()
    assert result.dead == [poisoned.pk]
    assert sorted(result.delivered) == sorted([fine_alice.pk, fine_bob.pk])
    dead = OutboxItem.objects.get(pk=poisoned.pk)
    assert dead.status == "dead" and "ValueError" in dead.last_error and dead.claimed_until is None
    # A later drain does not trip over it again, and staff can put it back once it is fixed.
    assert outbox.drain().as_dict()["dead"] == []
    assert outbox.requeue([poisoned.pk]) == 1
    monkeypatch.undo()
    assert outbox.drain().delivered == [poisoned.pk]


def test_a_retryable_error_backs_off_and_never_gives_up(alice, monkeypatch, settings):
    settings.OUTBOX_MAX_BACKOFF = 60
    item = _vector_item(alice, "Мой брат Антон работает хирургом")

    def down(**kwargs):
        raise VectorsUnavailable("qdrant: connection refused")

    monkeypatch.setattr(vectors(), "add", down)
    for attempt in range(1, 41):
        OutboxItem.objects.filter(pk=item.pk).update(next_attempt_at=timezone.now())
        result = outbox.drain()
        assert result.queued == [item.pk], attempt
        row = OutboxItem.objects.get(pk=item.pk)
        assert row.status == "queued" and row.attempts == attempt
        wait = (row.next_attempt_at - timezone.now()).total_seconds()
        assert 0 < wait <= 60
    # Not due yet: a drain leaves it alone until its backoff has passed.
    assert outbox.drain().queued == []
    monkeypatch.undo()
    OutboxItem.objects.filter(pk=item.pk).update(next_attempt_at=timezone.now())
    assert outbox.drain().delivered == [item.pk]


def test_errors_are_classified():
    assert outbox.classify(VectorsUnavailable("down"))[0] is True
    assert outbox.classify(MemoryServiceError("refused", retryable=False))[0] is False
    assert outbox.classify(ConnectionRefusedError("no"))[0] is True
    assert outbox.classify(TimeoutError("slow"))[0] is True
    retryable, reason = outbox.classify(ValueError("bad char"))
    assert retryable is False and reason.startswith("ValueError: bad char")


def test_an_item_leased_by_a_live_drainer_is_not_taken_twice(alice):
    item = _vector_item(alice, "Мой брат Антон работает хирургом")
    OutboxItem.objects.filter(pk=item.pk).update(
        claimed_until=timezone.now() + timedelta(minutes=1)
    )
    assert outbox.drain(ids=[item.pk], force=True).delivered == []
    OutboxItem.objects.filter(pk=item.pk).update(
        claimed_until=timezone.now() - timedelta(seconds=1)
    )
    assert outbox.drain(ids=[item.pk], force=True).delivered == [item.pk]


def test_the_sweep_replays_what_a_restart_left_queued_and_closes_orphaned_runs(alice, alice_api):
    stored = alice_api.remember("Моя сестра Анна Смирнова переехала в Новосибирск")
    # What a crash leaves: a remember whose process died after the commit, before delivery
    # and before the model step queued the graph insert; its run still says running.
    orphan = Run.objects.get(pk=stored["run"])
    OutboxItem.objects.filter(run=orphan).delete()
    fill.note_to_stores(note=Note.objects.get(run=orphan), run=orphan, graph=False)
    dead_process = f"{socket.gethostname()}:{2**22 + 7}:1"  # above pid_max: never alive
    Run.objects.filter(pk=orphan.pk).update(status="running", process=dead_process)
    stale = Run.objects.create(
        architect=alice, verb="recall", caller="t", channel="api", process="",
        created_at=timezone.now() - timedelta(days=1),
    )  # fmt: skip
    alive = Run.objects.create(
        architect=alice, verb="recall", caller="t", channel="api", process=runs.process_tag()
    )

    report = sweep.apply().get()

    assert report["closed_runs"] == 2
    assert set(Run.objects.filter(status="running").values_list("pk", flat=True)) == {alive.pk}
    orphan.refresh_from_db()
    assert orphan.status == "failed" and orphan.error.startswith("run_orphaned")
    assert Run.objects.get(pk=stale.pk).status == "failed"  # no process to ask: closed by age
    # The sweep completed the orphan's graph insert from the NER and delivered every item (the
    # note says «переехала», so it also looks for the note it replaces: the "notes" item).
    items = OutboxItem.objects.filter(run=orphan)
    assert sorted(items.values_list("store", flat=True)) == ["graph", "notes", "vectors", "vectors"]
    assert set(items.values_list("status", flat=True)) == {"done"}
    assert OutboxItem.objects.filter(status="queued").count() == 0


def test_dead_items_are_visible_on_the_stand_and_in_the_admin(client, alice, monkeypatch):
    from memory.models import User

    poisoned = _vector_item(alice, "poison")
    OutboxItem.objects.filter(pk=poisoned.pk).update(
        status="dead", last_error="ValueError: a character the engine cannot take"
    )
    _vector_item(alice, "Мой брат Антон работает хирургом")
    user = User.objects.create_user("ann", password="pw-ann-123", architect=alice)
    client.force_login(user)
    page = client.get("/en/settings?section=memory-test").content.decode()
    assert 'data-queued="1" data-dead="1"' in page
    assert f'data-item="{poisoned.pk}"' in page and "a character the engine cannot take" in page

    staff = User.objects.create_superuser("boss", password="pw-boss-123")
    client.force_login(staff)
    listing = client.get("/admin/memory/outboxitem/?status__exact=dead").content.decode()
    assert "a character the engine cannot take" in listing
    client.post(
        "/admin/memory/outboxitem/",
        {"action": "requeue", "_selected_action": [poisoned.pk]},
    )
    assert OutboxItem.objects.get(pk=poisoned.pk).status == "queued"


def test_a_claim_takes_only_the_items_no_other_drainer_holds(alice):
    items = [_vector_item(alice, f"Заметка номер {i}") for i in range(3)]
    pks = [i.pk for i in items]
    other = outbox._claim([pks[1]], force=True)  # another drainer leased the middle one
    assert [i.pk for i in other] == [pks[1]]
    mine = outbox._claim(pks, force=True)
    assert [i.pk for i in mine] == [pks[0], pks[2]]
    assert all(i.claimed_until is not None for i in mine)
    assert outbox._claim(pks, force=True) == []  # all leased now: nothing for a third


@pytest.mark.django_db(transaction=True)
def test_a_stopping_process_ends_its_rounds_and_gives_back_what_it_claimed(
    alice_api, settings, monkeypatch
):
    """Asked to stop, a round delivers nothing more of the backlog: what it claimed goes back to
    the queue unleased (never settled, so nothing is lost), and the next process delivers it."""
    import threading

    settings.STORES_FILL = "behind"  # the answers leave their items to the rounds
    for n in range(6):
        alice_api.remember(f"Сосед {n} держит кота по имени Барсик-{n}.")
    backlog = set(OutboxItem.objects.filter(status="queued").values_list("pk", flat=True))
    assert {s for s in OutboxItem.objects.values_list("store", flat=True)} >= {"vectors", "graph"}

    monkeypatch.setattr(outbox, "_stopping", threading.Event())
    outbox.stop_rounds()
    drained = outbox.drain()
    assert drained.delivered == [] and drained.held == []
    left = OutboxItem.objects.filter(pk__in=backlog)
    assert set(left.filter(status="queued", claimed_until=None).values_list("pk", flat=True)) == (
        backlog
    )

    monkeypatch.setattr(outbox, "_stopping", threading.Event())  # the next start
    while OutboxItem.objects.filter(status="queued").exists():
        outbox.drain(force=True)
    assert not left.exclude(status__in=["done", "held"]).exists()


def test_sigterm_to_the_web_worker_and_the_celery_workers_stop_end_the_rounds(monkeypatch):
    """Gunicorn's worker (memory.serving) and the Celery worker (memory.tasks) both tell the
    outbox they stop; gunicorn's own handler still runs after ours."""
    import signal
    import threading

    from celery.signals import worker_shutting_down

    from memory import serving

    seen: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: seen.append(signum))
    try:
        monkeypatch.setattr(outbox, "_stopping", threading.Event())
        serving._end_rounds_on_term()
        signal.raise_signal(signal.SIGTERM)
        assert outbox._stopping.is_set() and seen == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGTERM, previous)

    monkeypatch.setattr(outbox, "_stopping", threading.Event())
    worker_shutting_down.send(sender="worker@test", sig="SIGTERM", how="Warm", exitcode=0)
    assert outbox._stopping.is_set()
