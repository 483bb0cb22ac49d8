"""A real Celery worker process, on whichever broker the settings name (filesystem or Redis)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from memory import celery_app
from memory.models import Note, NoteKeyword
from memory.services.notes import note_create
from memory.tasks import notes_reindex


def database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


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
    queue = f"test-{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "DATABASE_URL": database_url(), "MEMORY_DATA_DIR": str(settings.DATA_DIR)}
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "memory",
            "worker",
            "-Q",
            queue,
            "--pool",
            "solo",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "--loglevel",
            "WARNING",
        ],
        cwd=Path(__file__).resolve().parent.parent,
        env=env,
    )
    try:
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
    finally:
        worker.terminate()
        worker.wait(timeout=20)
