"""The gate of /api/ (memory/contract/limits.py) and the one error shape (PASSPORT.md §14.3).

Every refusal here is checked for its status, its code, its language, its body shape (validated
against the published ErrorBody) and for writing nothing. The suite runs on SQLite and on
PostgreSQL (.ci/run), so "the same rule on both databases" is checked by running these tests.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.test import Client
from openapi_schema_validator import OAS30Validator

from memory.contract import limits
from memory.contract.registry import Param
from memory.contract.shapes import TEXT_MAX_CHARS
from memory.contract.version import CONTRACT_VERSION


@pytest.fixture
def error_schema(db: Any) -> OAS30Validator:
    spec = Client().get("/api/schema/", {"format": "json"}).json()
    return OAS30Validator({"$ref": "#/components/schemas/ErrorBody", **spec})


@pytest.fixture
def http(alice_api: Any) -> Client:
    client = Client(raise_request_exception=False)
    client.defaults["HTTP_AUTHORIZATION"] = f"Bearer {alice_api.key}"
    return client


def rows() -> dict[str, int]:
    """Rows of every model of the memory: what "nothing is written" is checked against."""
    return {m.__name__: m.objects.count() for m in apps.get_app_config("memory").get_models()}


def post(http: Client, verb: str, body: Any, **extra: Any) -> Any:
    data = body if isinstance(body, (str, bytes)) else json.dumps(body)
    return http.post(f"/api/v1/{verb}", data=data, content_type="application/json", **extra)


def refused(response: Any, status: int, code: str, schema: OAS30Validator) -> dict[str, Any]:
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    schema.validate(body)
    assert body["contract"] == CONTRACT_VERSION
    assert body["error"]["code"] == code, body
    return body["error"]


# --- characters: NUL, control characters, lone surrogates -------------------------------------

HOSTILE_PLACES = [
    pytest.param({"text": "a\u0000b"}, "text", id="nul-in-text"),
    pytest.param({"text": "x", "lang": "r\u0000u"}, "lang", id="nul-in-lang"),
    pytest.param({"text": "x", "co\u0000lour": 1}, '"co\\u0000lour"', id="nul-in-a-parameter-name"),
    pytest.param(
        {"text": "x", "scope": [{"kind": "ge\u0000o", "place": "x"}]},
        "scope[0].kind",
        id="nul-in-a-scope-kind",
    ),
    pytest.param(
        {"text": "x", "verdict": {"run": "r", "va\u0000lue": "confirm"}},
        "verdict",
        id="nul-in-a-nested-key",
    ),
    pytest.param({"text": "a\u0002b"}, "text", id="stx-in-text"),
    pytest.param(
        {"text": "x", "previous_results": ["ok", "b\u001bad"]}, "previous_results[1]", id="esc"
    ),
    pytest.param({"text": "x\u007f"}, "text", id="del"),
    pytest.param({"text": "x\ud800y"}, "text", id="lone-surrogate"),
]


@pytest.mark.django_db
@pytest.mark.parametrize("verb", ["remember", "recall"])
@pytest.mark.parametrize("body, where", HOSTILE_PLACES)
def test_a_bad_character_anywhere_is_refused_whole_before_any_write(
    http, error_schema, verb, body, where
):
    before = rows()
    # json.dumps writes NUL and the others as \uXXXX escapes, as a JSON client would.
    error = refused(post(http, verb, body), 400, "bad_character", error_schema)
    assert where in error["where"]
    assert "ничего не записано" in error["message"]
    assert rows() == before


@pytest.mark.django_db
def test_the_refusal_names_the_character_and_follows_lang(http, error_schema):
    error = refused(
        post(http, "remember", {"text": "ab\u0002c", "lang": "en"}),
        400,
        "bad_character",
        error_schema,
    )
    assert error["message"] == (
        "text holds the control character U+0002 at position 2: of the control characters the "
        "memory takes only tab and line breaks (\\t, \\n, \\r); the whole request is refused, "
        "nothing is written"
    )
    error = refused(post(http, "remember", {"text": "a\u0000"}), 400, "bad_character", error_schema)
    assert error["message"].startswith("в text символ U+0000 (NUL) на позиции 1")


@pytest.mark.django_db
@pytest.mark.parametrize("lang", ["ru", "en"])
def test_a_note_with_u0002_never_gives_a_500_on_remember_or_recall(alice_api, http, lang):
    # The case: U+0002 in a note made a later store delivery raise. It never gets in.
    for verb in ("remember", "recall"):
        response = post(http, verb, {"text": "Мой друг\u0002Дима", "lang": lang})
        assert response.status_code == 400, response.content
    # Tab and line breaks are text, and are kept as sent.
    stored = alice_api.remember("Мой друг\tДима\nживёт в Казани\r", lang=lang)
    answer = alice_api.recall("Где живёт Дима?", lang=lang)
    assert answer["answer"]["found"] is True
    assert "Мой друг\tДима\nживёт в Казани\r" in answer["answer"]["text"]
    assert stored["stored"]["note"] == answer["answer"]["data"]["notes"][0]["note"]


def test_the_character_rule_reads_the_whole_tree_without_recursion():
    deep: Any = "fine"
    for _ in range(5000):
        deep = [deep]
    assert limits.inspect(deep, "en", 10_000) is None
    refusal = limits.inspect({"a": [{"b": ["ok", "x\u0001"]}]}, "en", 32)
    assert refusal is not None
    assert refusal.extra["where"] == "a[0].b[1]"
    assert refusal.extra["position"] == 1


# --- size and depth ----------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_body_over_the_limit_is_413_too_large(http, error_schema, settings):
    before = rows()
    body = json.dumps({"text": "x" * (settings.MEMORY_MAX_BODY_BYTES + 1)})
    error = refused(post(http, "remember", body), 413, "too_large", error_schema)
    assert error["limit"] == settings.MEMORY_MAX_BODY_BYTES
    assert "MEMORY_MAX_BODY_BYTES" in error["message"]
    assert rows() == before


@pytest.mark.django_db
def test_the_longest_phrase_fits_the_body_limit_however_it_is_written(http, settings):
    # 20,000 characters outside the BMP, each escaped as a surrogate pair: 12 bytes a character.
    body = json.dumps({"text": "😀" * TEXT_MAX_CHARS, "lang": "en"}, ensure_ascii=True)
    assert len(body) > TEXT_MAX_CHARS * 12
    assert len(body) <= settings.MEMORY_MAX_BODY_BYTES
    response = post(http, "recall", body)
    assert response.status_code == 200, response.content[:300]
    assert response.json()["params"]["text"] == {"fate": "accepted"}
    # One character more is the phrase's limit, not the body's: the fate names it.
    response = post(http, "recall", {"text": "x" * (TEXT_MAX_CHARS + 1), "lang": "en"})
    assert response.status_code == 400
    assert response.json()["error"]["params"]["text"] == {
        "fate": "bad_form",
        "note": f"longer than {TEXT_MAX_CHARS} characters",
    }


def test_a_body_limit_that_cannot_hold_the_longest_phrase_stops_the_start(settings):
    settings.MEMORY_MAX_BODY_BYTES = settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 200_000
    with pytest.raises(ImproperlyConfigured, match="must be at least 305536"):
        limits.InputLimits(lambda request: None)
    settings.MEMORY_MAX_BODY_BYTES = 2_000_000
    with pytest.raises(ImproperlyConfigured, match="DATA_UPLOAD_MAX_MEMORY_SIZE"):
        limits.InputLimits(lambda request: None)


@pytest.mark.django_db
@pytest.mark.parametrize("levels", [33, 100, 5000])
def test_json_nested_too_deep_is_400_too_deep(http, error_schema, settings, levels):
    # The body object is level 1, so `levels` nested lists inside it make levels + 1.
    body = '{"text": "x", "a": ' + "[" * levels + "]" * levels + "}"
    error = refused(post(http, "remember", body), 400, "too_deep", error_schema)
    assert error["limit"] == settings.MEMORY_MAX_JSON_DEPTH == 32


@pytest.mark.django_db
def test_json_at_the_depth_limit_passes_the_gate(http):
    body = '{"text": "x", "lang": "en", "a": ' + "[" * 31 + "]" * 31 + "}"
    response = post(http, "recall", body)
    assert response.status_code == 200
    assert response.json()["params"]["a"]["fate"] == "bad_form"


@pytest.mark.django_db
@pytest.mark.parametrize(
    "body, message",
    [
        ("{not json", "тело запроса — не JSON: ошибка в строке 1, столбце 2"),
        ('{"text": NaN}', "тело запроса — не JSON: NaN в JSON не бывает"),
        (b'{"text": "\xff"}', "тело запроса — не текст в кодировке utf-8"),
    ],
)
def test_a_body_that_is_not_json_is_400_bad_json(http, error_schema, body, message):
    error = refused(post(http, "remember", body), 400, "bad_json", error_schema)
    assert error["message"] == message


# --- headers -----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_headers_over_the_limit_are_431(http, error_schema, settings):
    error = refused(
        post(http, "recall", {"text": "x"}, HTTP_X_PADDING="x" * settings.MEMORY_MAX_HEADER_BYTES),
        431,
        "headers_too_large",
        error_schema,
    )
    assert error["limit"] == settings.MEMORY_MAX_HEADER_BYTES == 8192
    assert post(http, "recall", {"text": "x"}, HTTP_X_PADDING="x" * 4000).status_code == 200


# --- one shape for 401, 404, 405, 415, 500 -----------------------------------------------------


@pytest.mark.django_db
def test_401_follows_the_bodys_lang(error_schema):
    response = Client().post(
        "/api/v1/recall", {"text": "x", "lang": "en"}, content_type="application/json"
    )
    error = refused(response, 401, "no_key", error_schema)
    assert error["message"] == "no memory key: send the header 'Authorization: Bearer <memory key>'"
    response = Client().post(
        "/api/v1/recall", {"text": "x"}, content_type="application/json", HTTP_AUTHORIZATION="x"
    )
    assert refused(response, 401, "bad_key", error_schema)["message"].startswith("ключ памяти")


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/api/v1/nothing", "/api/v1/remember/", "/api/nothing", "/api/"])
def test_404_under_api_is_json(http, error_schema, path):
    error = refused(http.get(path), 404, "not_found", error_schema)
    assert error["message"] == (
        f"по адресу {path} ничего нет; глаголы памяти: POST /api/v1/remember, POST /api/v1/recall"
    )
    english = refused(post(http, "nothing", {"lang": "en"}), 404, "not_found", error_schema)
    assert english["message"].startswith("nothing is at /api/v1/nothing")


@pytest.mark.django_db
def test_404_elsewhere_stays_a_page(http):
    response = http.get("/ru/no-such-page")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


@pytest.mark.django_db
def test_405_is_json_and_names_the_method(http, error_schema):
    error = refused(http.get("/api/v1/remember"), 405, "method_not_allowed", error_schema)
    assert error["message"] == "метод GET здесь не принимается; этот адрес принимает: POST, OPTIONS"


@pytest.mark.django_db
def test_415_is_json(http, error_schema):
    response = http.post("/api/v1/recall", data="text=x", content_type="text/plain")
    error = refused(response, 415, "unsupported_media_type", error_schema)
    assert "text/plain" in error["message"]


@pytest.mark.django_db
def test_500_under_api_is_json(http, error_schema, monkeypatch):
    def broken(self, verb):
        raise RuntimeError("a bug")

    monkeypatch.setattr(Param, "status", broken)
    error = refused(
        post(http, "recall", {"text": "x", "lang": "en"}), 500, "server_error", error_schema
    )
    assert error["message"] == "an internal error of the memory; the cause is in the server's log"
    assert "a bug" not in json.dumps(error)


def test_500_elsewhere_stays_a_page(rf):
    from memory.contract import errors

    assert errors.handler500(rf.get("/ru/settings"))["Content-Type"].startswith("text/html")
    assert errors.handler500(rf.get("/api/v1/recall"))["Content-Type"] == "application/json"


# --- a scope with a bad record is refused whole ------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("verb", ["remember", "recall"])
def test_a_bad_scope_record_refuses_the_whole_request_and_writes_nothing(http, error_schema, verb):
    before = rows()
    scope = [
        {"kind": "geo", "place": "madrid"},
        {"kind": "geo", "place": "new york"},
        {"kind": "calendar", "date": "2026-06-01"},
        {"kind": "calendar"},
    ]
    response = post(http, verb, {"text": "Такси в Мадриде — Cabify", "scope": scope})
    error = refused(response, 400, "bad_scope", error_schema)
    fate = error["params"]["scope"]
    assert (fate["fate"], fate["index"], fate["indexes"]) == ("bad_form", 1, [1, 3])
    assert "запись №2 (индекс 1)" in fate["note"] and "запись №4 (индекс 3)" in fate["note"]
    assert error["message"].startswith("параметр scope неверен")
    assert error["params"]["text"] == {"fate": "accepted"}
    assert rows() == before


@pytest.mark.parametrize(
    "body, code",
    [
        ({"text": "a\u0002b"}, "bad_character"),
        ({"text": "x", "scope": [{"kind": "ge\u0000o"}]}, "bad_character"),
        ({"text": "x", "a": json.loads("[" * 40 + "]" * 40)}, "too_deep"),
    ],
)
def test_the_parsing_step_applies_the_gates_rule_for_callers_past_the_gate(body, code):
    # The playground calls the services directly; the same refusal reaches it.
    from memory.errors import MemoryServiceError
    from memory.services.cycle import read_params

    with pytest.raises(MemoryServiceError) as refusal:
        read_params("remember", body)
    assert (refusal.value.code, refusal.value.status) == (code, 400)
    assert refusal.value.details["where"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "content_type", ["application/*", "*/*", "Application/JSON; charset=utf-8"]
)
def test_every_content_type_drf_reads_as_json_passes_the_gate(http, error_schema, content_type):
    body = '{"text": "x", "a": ' + "[" * 5000 + "]" * 5000 + "}"  # DRF alone would 500
    response = http.post("/api/v1/recall", data=body, content_type=content_type)
    refused(response, 400, "too_deep", error_schema)
