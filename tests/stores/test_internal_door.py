"""One process owns the embedded stores; others reach them through the internal door.

The web server (pytest-django's live server, in this process) owns the local Qdrant and
LightRAG; a REAL Celery worker process, started with MEMORY_STORE_ACCESS=door, replays the
outbox by asking the owner through the door — both running at once.
"""

from __future__ import annotations

import time

import httpx
import pytest
from django.conf import settings

from memory import celery_app
from memory.models import Note, OutboxItem
from memory.stores import outbox
from memory.stores.vectors import VectorItem, vectors
from tests.workers import celery_worker


def test_only_the_machine_secret_opens_the_door(live_server, alice_api):
    body = {"architect": 1, "kind": "notes", "query": "x"}
    url = f"{live_server.url}/internal/v1/vectors/search"
    assert (
        httpx.post(
            url, json=body, headers={"X-Machine-Secret": settings.MACHINE_SECRET}
        ).status_code
        == 200
    )
    assert (
        httpx.post(url, json=body, headers={"Authorization": f"Bearer {alice_api.key}"}).status_code
        == 401
    )
    assert httpx.post(url, json=body, headers={"X-Machine-Secret": "guess"}).status_code == 401
    assert httpx.post(url, json=body).status_code == 401
    # ...and the machine secret does not open the contract.
    contract = httpx.post(
        f"{live_server.url}/api/v1/recall",
        json={"text": "x"},
        headers={"X-Machine-Secret": settings.MACHINE_SECRET},
    )
    assert contract.status_code == 401


@pytest.mark.slow
def test_a_worker_in_another_process_replays_the_outbox_through_the_owner(
    live_server, alice, settings
):
    note = Note.objects.create(
        architect=alice, text="Мой брат Антон работает хирургом.", sender="t"
    )
    item = outbox.vectors_add(
        architect=alice,
        kind="notes",
        items=[VectorItem(id=str(note.pk), text=note.text, payload={"note": str(note.pk)})],
        run=None,
    )
    with celery_worker(MEMORY_STORE_ACCESS="door", MEMORY_INTERNAL_URL=live_server.url) as queue:
        celery_app.send_task("memory.outbox_replay", queue=queue)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and OutboxItem.objects.get(pk=item.pk).status != "done":
            time.sleep(0.3)
        assert OutboxItem.objects.get(pk=item.pk).status == "done"
    # Delivered by the owner (this process) into its own local Qdrant.
    hits = vectors().search(kind="notes", architect_id=alice.pk, query="Кем работает брат?")
    assert hits and hits[0].payload["note"] == str(note.pk)
