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
