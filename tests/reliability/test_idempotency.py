"""Idempotent remember (PASSPORT.md §14.2): the IETF draft's Idempotency-Key semantics."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from memory.models import IdempotencyRecord, Note, Run
from memory.services import idempotency
from tests.conftest import MemoryClient
from tests.services.test_model_cycle import PARSE

pytestmark = pytest.mark.django_db


def _post(api, body, key, **extra):
    return api.http.post("/api/v1/remember", body, format="json", HTTP_IDEMPOTENCY_KEY=key, **extra)


def test_the_same_key_and_body_return_the_first_answer_and_store_the_fact_once(alice_api):
    body = {"text": "Мой друг Антон Петров живёт в Казани"}
    first = _post(alice_api, body, "order-1")
    again = _post(alice_api, body, "order-1")
    assert first.status_code == again.status_code == 200
    assert again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true" and "Idempotent-Replayed" not in first
    assert Note.objects.count() == 1
    assert Run.objects.filter(verb="remember").count() == 1


def test_the_same_key_with_another_body_is_422_and_writes_nothing(alice_api):
    _post(alice_api, {"text": "Мой друг Антон"}, "k-2")
    refused = _post(alice_api, {"text": "Мой друг Миша"}, "k-2")
    assert refused.status_code == 422
    assert refused.json()["error"]["code"] == "idempotency_key_reused"
    assert Note.objects.count() == 1


def test_keys_belong_to_one_architect(alice_api, bob_api):
    body = {"text": "Мой друг Антон"}
    assert _post(alice_api, body, "shared").status_code == 200
    assert _post(bob_api, body, "shared").status_code == 200
    assert Note.objects.count() == 2


def test_a_malformed_key_is_400_before_anything_is_written(alice_api):
    refused = _post(alice_api, {"text": "Мой друг Антон"}, "has spaces in it")
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "bad_idempotency_key"
    assert Note.objects.count() == 0


def test_a_key_whose_first_request_is_still_served_is_409(alice_api, alice):
    run = Run.objects.create(architect=alice, verb="remember", caller="t", channel="api")
    IdempotencyRecord.objects.create(
        architect=alice,
        key="busy",
        fingerprint=idempotency.fingerprint({"text": "Мой друг Антон"}),
        run=run,
    )
    busy = _post(alice_api, {"text": "Мой друг Антон"}, "busy")
    assert busy.status_code == 409
    assert busy.json()["error"] == {
        "code": "idempotency_in_progress",
        "message": busy.json()["error"]["message"],
        "retryable": True,
    }


def test_a_key_whose_first_request_died_answers_from_the_stored_facts(alice_api, alice):
    body = {"text": "Моя сестра Анна Смирнова живёт в Новосибирске"}
    first = _post(alice_api, body, "crashed").json()
    # The process died after the commit, before the answer was recorded; the sweep closed the run.
    IdempotencyRecord.objects.filter(key="crashed").update(answer=None)
    Run.objects.filter(pk=first["run"]).update(status="failed")
    again = _post(alice_api, body, "crashed")
    assert again.status_code == 200
    assert again.json()["stored"] == first["stored"] and again.json()["run"] == first["run"]
    assert again.json()["stores"]["vectors"]["status"] == "written"
    assert Note.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_twins_store_the_fact_once(alice, client_for):
    api = client_for(alice)
    body = {"text": "Мой коллега Сергей Иванов работает в Сбербанке"}
    codes: list[int] = []

    def send() -> None:
        twin = MemoryClient(api.key)  # a client of its own per thread
        codes.append(_post(twin, body, "twin").status_code)
        connection.close()

    threads = [threading.Thread(target=send) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert sorted(set(codes)) in ([200], [200, 409]), codes
    assert codes.count(200) >= 1
    assert Note.objects.count() == 1


@pytest.mark.slow
@pytest.mark.usefixtures("grown")
def test_a_refusal_after_the_commit_is_replayed_as_it_was(fake_claude, alice_api):
    """A thread the CLI lost is refused (404) after the note is kept; a retry with the same key
    gets the same refusal and the note is not stored twice."""
    fake_claude.script([PARSE, {"match": "Запомни", "result": "ok"}])
    thread = alice_api.remember("У меня есть друг Дима")["thread"]
    for path in fake_claude.home.glob(f"projects/*/{thread}.jsonl"):
        path.unlink()
    body = {"text": "И ещё друг Миша", "thread": thread}
    first = _post(alice_api, body, "lost-thread")
    again = _post(alice_api, body, "lost-thread")
    assert first.status_code == again.status_code == 404
    assert again.json() == first.json() and again.json()["error"]["code"] == "thread_not_found"
    assert Note.objects.filter(text="И ещё друг Миша").count() == 1
