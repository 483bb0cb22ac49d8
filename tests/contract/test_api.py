"""The two verbs end to end through the HTTP door, with real keys and a real database."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from memory.contract.version import CONTRACT_VERSION
from memory.models import Note, Run


@pytest.mark.django_db
def test_it_remembers_a_friend_and_recalls_friends_at_level_1(alice_api):
    stored = alice_api.remember("У меня есть друг Дима")
    assert stored["tables"][0]["table"] == "notes"
    assert stored["tables"][0]["rows"] == 1
    assert stored["params"] == {"text": {"fate": "accepted"}}

    answer = alice_api.recall("Кто мои друзья?")
    assert answer["kind"] == "affirmative"
    assert answer["depth_used"] == 1
    assert answer["answer"]["found"] is True
    assert "У меня есть друг Дима" in answer["answer"]["text"]
    assert answer["answer"]["data"]["notes"][0]["note"] == stored["stored"]["note"]
    catalog, notes = answer["report"]
    assert (catalog["source"], catalog["status"]) == ("catalog", "empty")
    assert notes == {
        "level": 1,
        "store": "tables",
        "source": "notes",
        "status": "answered",
        "returned": 1,
        "kind": "affirmative",
        "note": "совпали слова: друг",
    }


@pytest.mark.django_db
def test_it_answers_found_false_at_depth_1_for_an_unknown_fact(alice_api):
    alice_api.remember("У меня есть друг Дима")
    answer = alice_api.recall("Какой у меня любимый цвет?", depth="extreme")
    assert answer["answer"]["found"] is False
    # Asked extreme, capped to standard: levels 1 and 3 ran, 2 was skipped (no model) —
    # the fact is 3, not 5.
    assert answer["depth_used"] == 3
    assert [e["level"] for e in answer["report"]] == [1, 1, 2, 3]
    assert [e["status"] for e in answer["report"]] == ["empty", "empty", "skipped", "empty"]
    assert answer["report"][3]["note"].startswith("граф вернул")


@pytest.mark.django_db
def test_it_never_lets_one_architect_recall_anothers_note(alice_api, bob_api):
    alice_api.remember("Мой друг Дима живёт в Казани")
    answer = bob_api.recall("Где живёт Дима?")
    assert answer["answer"]["found"] is False
    assert Note.objects.count() == 1


@pytest.mark.django_db
def test_it_returns_401_for_a_wrong_key(alice_api):
    http = APIClient()
    http.credentials(HTTP_AUTHORIZATION="Bearer mem_000000000000_wrong")
    response = http.post("/api/v1/recall", {"text": "x"}, format="json")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "bad_key"
    assert response.headers["WWW-Authenticate"] == 'Bearer realm="memory"'


@pytest.mark.django_db
def test_it_returns_401_with_no_key():
    response = APIClient().post("/api/v1/remember", {"text": "x"}, format="json")
    assert response.status_code == 401
    assert response.json() == {
        "contract": CONTRACT_VERSION,
        "error": {
            "code": "no_key",
            "message": "нет ключа памяти: передайте заголовок 'Authorization: Bearer <ключ памяти>'",
            "retryable": False,
        },
    }


@pytest.mark.django_db
def test_it_refuses_a_revoked_key(alice_api):
    from django.utils import timezone

    from memory.models import ApiKey

    ApiKey.objects.update(revoked_at=timezone.now())
    http = APIClient()
    http.credentials(HTTP_AUTHORIZATION=f"Bearer {alice_api.key}")
    assert http.post("/api/v1/recall", {"text": "x"}, format="json").status_code == 401


@pytest.mark.django_db
def test_it_marks_an_unknown_parameter_bad_form(alice_api):
    answer = alice_api.recall("Кто мои друзья?", colour="blue")
    assert answer["params"]["colour"]["fate"] == "bad_form"
    assert answer["params"]["colour"]["note"].startswith("неизвестный параметр")


@pytest.mark.django_db
def test_it_names_the_broken_scope_record(alice_api):
    # A scope with one bad record refuses the whole remember: storing the fact without its
    # scope would silently promote it to "unknown where and when" (this test used to assert
    # exactly that promotion).
    body = alice_api.call(
        "remember",
        expect=400,
        text="Такси в Мадриде — Cabify",
        scope=[{"kind": "geo", "place": "madrid"}, {"kind": "calendar", "date": "2026-02-31"}],
        lang="en",
    )
    assert body["error"]["code"] == "bad_scope"
    fate = body["error"]["params"]["scope"]
    assert fate["fate"] == "bad_form"
    assert fate["index"] == 1
    assert fate["indexes"] == [1]
    assert fate["note"].startswith("record #2 (index 1): date:")
    assert "nothing is written" in body["error"]["message"]
    assert Note.objects.count() == 0


@pytest.mark.django_db
def test_it_marks_a_parameter_of_the_other_verb_bad_form(alice_api):
    answer = alice_api.remember("x y z", depth="deep", lang="en")
    assert answer["params"]["depth"] == {
        "fate": "bad_form",
        "note": "this is a parameter of recall, not of remember",
    }


@pytest.mark.django_db
def test_it_names_the_depth_cap_of_the_key(alice_api):
    answer = alice_api.recall("Кто мои друзья?", depth="deep", lang="en")
    fate = answer["params"]["depth"]
    assert fate["fate"] == "accepted"
    assert "this key allows depth up to standard; asked deep, ran as standard" in fate["note"]


@pytest.mark.django_db
def test_a_deep_key_runs_deep_and_names_the_levels_it_could_not_run(bob, client_for):
    api = client_for(bob, "deep")
    answer = api.recall("что угодно", depth="deep", lang="en")
    fate = answer["params"]["depth"]
    assert "allows depth up to" not in fate["note"]
    assert "level 2 skipped" in fate["note"]
    # Level 4: notes, notes in context, summaries, objects.
    assert [e["level"] for e in answer["report"]] == [1, 1, 2, 3, 4, 4, 4, 4]


@pytest.mark.django_db
def test_it_refuses_a_request_without_text(alice_api):
    body = alice_api.call("recall", expect=400, depth="deep", lang="en")
    assert body["error"]["code"] == "text_required"
    assert body["error"]["params"]["depth"]["fate"] == "accepted"
    assert "text" not in body["error"]["params"]


@pytest.mark.django_db
def test_it_refuses_a_body_that_is_not_an_object(alice_api):
    response = alice_api.http.post("/api/v1/remember", ["text"], format="json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "bad_request"


@pytest.mark.django_db
def test_it_refuses_malformed_json_with_the_same_error_shape(alice_api):
    response = alice_api.http.post(
        "/api/v1/remember", data="{not json", content_type="application/json"
    )
    assert response.status_code == 400
    body = response.json()
    assert body["error"]["code"] == "bad_json"
    assert set(body) == {"contract", "error"}


@pytest.mark.django_db
def test_it_gives_the_trace_only_when_asked(alice_api):
    alice_api.remember("У меня есть друг Дима")
    assert "trace" not in alice_api.recall("Кто мои друзья?")
    traced = alice_api.recall("Кто мои друзья?", trace=True)
    assert traced["trace"][0] == {"level": 1, "event": "keywords", "keywords": ["друг"]}


@pytest.mark.django_db
def test_it_writes_a_run_record_with_the_facts(alice_api):
    alice_api.remember("У меня есть друг Дима")
    answer = alice_api.recall("Кто мои друзья?", depth="deep", colour="x")
    run = Run.objects.get(pk=answer["run"])
    assert run.verb == "recall"
    assert run.depth_asked == "deep"
    assert run.depth_granted == "standard"
    assert run.depth_used == 1
    assert run.kind == "affirmative"
    assert run.found is True
    assert run.model_turns == 0
    assert run.stores == ["tables"]
    assert run.params["colour"]["fate"] == "bad_form"
    assert run.seconds > 0
    assert run.caller.startswith("key:")
    assert run.complete is False


@pytest.mark.django_db
def test_a_verdict_on_an_earlier_run_completes_it(alice_api, bob_api):
    first = alice_api.recall("Кто мои друзья?")
    answer = alice_api.recall(
        "Какой у меня любимый цвет?", verdict={"run": first["run"], "value": "reject"}, lang="en"
    )
    assert answer["params"]["verdict"] == {
        "fate": "accepted",
        "note": f"verdict reject recorded for run {first['run']}",
    }
    run = Run.objects.get(pk=first["run"])
    assert run.verdict == "reject"
    assert str(run.verdict_run_id) == answer["run"]

    # Bob cannot judge Alice's run.
    other = bob_api.recall("x", verdict={"run": first["run"], "value": "confirm"}, lang="en")
    assert other["params"]["verdict"]["fate"] == "bad_form"
    assert Run.objects.get(pk=first["run"]).verdict == "reject"


@pytest.mark.django_db
def test_unsupported_parameters_say_why(alice_api):
    answer = alice_api.remember(
        "Отчёт за май",
        uploads=[{"kind": "document", "name": "may.pdf"}],
        thread="8ebb61f7",
        lang="en",
    )
    assert answer["params"]["uploads"]["fate"] == "not_supported"
    assert "object store" in answer["params"]["uploads"]["note"]
    assert answer["params"]["thread"] == {
        "fate": "not_supported",
        "note": "no model is configured (MODEL_BACKEND=none), so there is no thread to continue.",
    }


@pytest.mark.django_db
def test_a_bad_upload_item_is_bad_form_with_its_index(alice_api):
    answer = alice_api.remember(
        "файлы",
        uploads=[{"kind": "image", "name": "a.png"}, {"kind": "hologram", "name": "b"}],
        lang="en",
    )
    fate = answer["params"]["uploads"]
    assert fate["fate"] == "bad_form"
    assert fate["index"] == 1
    assert "kind" in fate["note"]


@pytest.mark.django_db
def test_every_answer_carries_the_contract_version(alice_api):
    assert alice_api.remember("x")["contract"] == CONTRACT_VERSION
    assert alice_api.recall("x")["contract"] == CONTRACT_VERSION
