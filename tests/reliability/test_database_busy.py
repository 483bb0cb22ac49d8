"""A database error before the commit (a deadlock, a lock timeout, a lost connection) rolls the
request back: the answer is the one error shape with 503 and ``retryable: true``, never a 500,
and nothing is kept. The error is raised by the real code path on its first database write
(PostgreSQL's deadlock cannot be aimed at one request; the concurrent load test in
tests/serving/test_load.py is where real deadlocks were found and are now prevented)."""

from __future__ import annotations

import pytest
from django.db import OperationalError

from memory.knowledge import notes as notes_service
from memory.models import Note, Run


@pytest.mark.django_db
@pytest.mark.parametrize("lang", ["ru", "en"])
def test_a_deadlock_before_the_commit_is_a_retryable_503_and_nothing_is_kept(
    bob_api, monkeypatch, lang
):
    def deadlock(*args, **kwargs):
        raise OperationalError("deadlock detected")

    monkeypatch.setattr(notes_service, "_one_writer", deadlock)
    body = bob_api.call("remember", expect=503, text="Мой любимый цвет синий.", lang=lang)
    assert body["error"]["code"] == "database_busy" and body["error"]["retryable"] is True
    assert ("ничего не записано" if lang == "ru" else "nothing was written") in body["error"][
        "message"
    ]
    assert Note.objects.count() == 0 and Run.objects.filter(verb="remember").count() == 0
