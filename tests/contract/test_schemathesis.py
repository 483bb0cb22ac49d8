"""Schemathesis over the published OpenAPI schema: 0 server errors, 0 answers the schema does not
describe (PASSPORT.md §14.3).

Both verbs, bodies the schema allows and bodies it forbids, a bounded and deterministic number of
cases per operation (derandomized, no shrinking: a failure is reported as generated), sent through
the WSGI application with a valid memory key on a database that really commits (what the outbox
and the stores see is what a live server would see). Each answer is checked for: no 5xx, a status
code the operation declares, the declared content type, a body valid against the declared schema.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import schemathesis
from django.conf import settings as settings_module
from hypothesis import HealthCheck, Phase, assume, given, settings
from rest_framework.test import APIClient
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from memory.contract import limits
from memory.models import Architect
from memory.services import idempotency
from memory.wsgi import application
from tests.conftest import make_key

EXAMPLES_PER_OPERATION = 150
SEED = (
    "У меня есть друг Дима",
    "Мой друг Дима живёт в Казани",
    "В Мадриде я езжу на Cabify",
    "ok",
)
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


def _passes_the_gate(case: Any) -> bool:
    """Would the gate let this request through to the verb (characters, depth, the key)?"""
    body = case.body
    try:
        body = json.loads(json.dumps(body))  # as it travels: escaped surrogate pairs join
    except (TypeError, ValueError):
        return False
    if limits.inspect(body, "en", settings_module.MEMORY_MAX_JSON_DEPTH) is not None:
        return False
    key = (case.headers or {}).get(idempotency.HEADER)
    return key is None or re.match(idempotency.KEY_PATTERN, key) is not None


@pytest.mark.slow
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
@pytest.mark.parametrize("path", ["/api/v1/remember", "/api/v1/recall"])
def test_the_api_answers_every_generated_request_as_its_schema_says(grown, path, mode):
    key = make_key(Architect.objects.create(name="fuzz"), "extreme")
    # Something to find, so recall's levels have notes, a graph and vectors to search.
    seed = APIClient()
    seed.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    for text in SEED:
        assert seed.post("/api/v1/remember", {"text": text}, format="json").status_code == 200
    schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", application)
    operation = schema[path]["POST"]
    answered: dict[int, int] = {}

    @settings(
        max_examples=EXAMPLES_PER_OPERATION,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(generation_mode=mode))
    def check(case: Any) -> None:
        if mode == GenerationMode.POSITIVE:
            # What the schema allows but cannot say the gate refuses (control characters and
            # lone surrogates anywhere in a body: tests/contract/test_limits.py proves those
            # refusals); how many of them a generated stream holds follows hash order even when
            # derandomized, so positive cases are the bodies that reach the verb.
            assume(_passes_the_gate(case))
        response = case.call(headers={"Authorization": f"Bearer {key}"})
        answered[response.status_code] = answered.get(response.status_code, 0) + 1
        case.validate_response(response, checks=CHECKS)

    check()
    # The run reached the verbs: most positive cases are answered 200; the rest are a period
    # whose start is after its end (stated in words only) and an Idempotency-Key reused with
    # another body (422).
    if mode == GenerationMode.POSITIVE:
        print(f"{path} positive: {answered}")
        assert answered.get(200, 0) > EXAMPLES_PER_OPERATION / 2, answered
