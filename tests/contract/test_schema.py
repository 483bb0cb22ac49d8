"""Real answers, validated against the OpenAPI schema the service publishes."""

from __future__ import annotations

from typing import Any

import pytest
from openapi_schema_validator import OAS30Validator
from rest_framework.test import APIClient

from memory.contract.registry import PARAMS
from memory.contract.version import CONTRACT_VERSION


@pytest.fixture
def spec(db: Any) -> dict[str, Any]:
    response = APIClient().get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    return response.json()


def validate(spec: dict[str, Any], component: str, instance: Any) -> None:
    schema = {"$ref": f"#/components/schemas/{component}", "components": spec["components"]}
    OAS30Validator(schema).validate(instance)


def test_it_publishes_the_contract_version(spec):
    assert spec["info"]["version"] == CONTRACT_VERSION


def test_every_registered_parameter_is_in_the_schema_of_its_verbs(spec):
    schemas = spec["components"]["schemas"]
    for p in PARAMS:
        for verb in ("remember", "recall"):
            properties = schemas[f"{verb.capitalize()}Request"]["properties"]
            assert (p.name in properties) == (verb in p.verbs), (p.name, verb)
    assert schemas["RecallRequest"]["required"] == ["text"]


def test_the_schema_states_each_parameters_capability(spec):
    properties = spec["components"]["schemas"]["RememberRequest"]["properties"]
    assert properties["text"]["description"].endswith("[accepted]")
    assert "[not_supported — " in properties["uploads"]["description"]


def test_the_doors_require_a_bearer_key(spec):
    for path in ("/api/v1/remember", "/api/v1/recall"):
        assert spec["paths"][path]["post"]["security"] == [{"memoryKey": []}]


@pytest.mark.django_db
def test_real_answers_match_the_schema(spec, alice_api):
    remembered = alice_api.remember(
        "В Мадриде я езжу на Cabify",
        scope=[{"kind": "geo", "place": "Madrid"}],
        trace=True,
        thread="abc",
        colour="x",
    )
    validate(spec, "RememberAnswer", remembered)
    for answer in (
        alice_api.recall("На каком такси я езжу?", trace=True),  # parameter_dependent
        alice_api.recall("На каком такси я езжу?", scope=[{"kind": "geo", "place": "madrid"}]),
        alice_api.recall("Какой у меня любимый цвет?", depth="extreme", previous_results=["a"]),
        alice_api.recall("x", verdict={"run": remembered["run"], "value": "confirm"}),
    ):
        validate(spec, "RecallAnswer", answer)


@pytest.mark.django_db
def test_error_bodies_match_the_schema(spec, alice_api):
    validate(spec, "ErrorBody", alice_api.call("recall", expect=400, depth="deep"))
    validate(spec, "ErrorBody", APIClient().post("/api/v1/recall", {}, format="json").json())


@pytest.mark.django_db
def test_the_schema_would_catch_an_undeclared_field(spec, alice_api):
    answer = alice_api.recall("x")
    answer["surprise"] = 1
    with pytest.raises(Exception, match="surprise"):
        validate(spec, "RecallAnswer", answer)


def test_the_swagger_page_is_served_without_a_cdn(db):
    response = APIClient().get("/api/docs/")
    assert response.status_code == 200
    assert b"cdn.jsdelivr" not in response.content


# A fresh process, as gunicorn's serving process is after start: the first generations run in
# threads at once (gthread), four through /api/schema/ and four through the MCP door's tool
# schemas, released together by a barrier. drf-spectacular alone answered one 200 and seven 500s
# here (its extensions resolve their classes on first use, unguarded).
_CONCURRENT_FIRST_GENERATIONS = """
import json, threading, django
django.setup()
from django.test import Client
from memory.api import mcp
barrier, results = threading.Barrier(8), []
def page():
    barrier.wait()
    results.append(Client(raise_request_exception=False).get("/api/schema/").status_code)
def tools():
    barrier.wait()
    try:
        results.append("ok" if mcp.input_schema("remember")["properties"] else "empty")
    except Exception as error:
        results.append(repr(error))
threads = [threading.Thread(target=f) for f in [page, tools] * 4]
[t.start() for t in threads]
[t.join() for t in threads]
print(json.dumps(results))
"""


def test_the_first_schema_generations_in_threads_at_once_all_succeed(tmp_path):
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "memory.settings"}
    env["MEMORY_DATA_DIR"] = str(tmp_path)
    result = subprocess.run(
        [sys.executable, "-c", _CONCURRENT_FIRST_GENERATIONS],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    results = json.loads(result.stdout.strip().splitlines()[-1])
    assert sorted(map(str, results)) == ["200"] * 4 + ["ok"] * 4, results


def test_the_schema_generates_without_a_warning_and_validates(tmp_path):
    """drf-spectacular's own check: every view and field described (no guessed serializer), and
    the document valid OpenAPI 3 (its --validate); a warning fails the command."""
    from django.core.management import call_command

    out = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    assert out.read_text().startswith("openapi: 3")
