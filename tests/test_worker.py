"""A real Celery worker process, on whichever broker the settings name (filesystem or Redis)."""

from __future__ import annotations

import time

import pytest

from memory import celery_app
from memory.knowledge.notes import note_create
from memory.models import Note, NoteKeyword
from memory.tasks import notes_reindex
from tests.workers import celery_worker


@pytest.mark.django_db
def test_the_task_rebuilds_lemmas(alice, settings):
    note = note_create(
        architect=alice, text="У меня есть друг Дима", scope=[], sender="t", run=None
    )
    NoteKeyword.objects.filter(note=note).delete()
    assert notes_reindex(alice.pk) == 1
    assert sorted(NoteKeyword.objects.values_list("lemma", flat=True)) == ["дима", "друг"]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_runs_a_task_sent_through_the_broker(alice):
    note = note_create(architect=alice, text="Мой друг Миша", scope=[], sender="t", run=None)
    NoteKeyword.objects.filter(note=note).delete()
    with celery_worker() as queue:
        celery_app.send_task("memory.notes_reindex", args=[alice.pk], queue=queue)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if NoteKeyword.objects.filter(note=note).exists():
                break
            time.sleep(0.3)
        assert sorted(NoteKeyword.objects.filter(note=note).values_list("lemma", flat=True)) == [
            "друг",
            "миша",
        ]
        assert Note.objects.count() == 1
