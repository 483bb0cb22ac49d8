"""The validator and the published schema agree, checked both ways.

Request bodies are generated from the schema the service publishes (/api/schema/?format=json) by
schemathesis: bodies the schema allows (positive) and bodies it forbids (negative). Each top-level
key is judged by the schema alone (its property's subschema, formats asserted; a key the schema
does not name is forbidden: the request components are closed) and by the validator
(``memory.contract.params.parse``): a key the schema forbids must be ``bad_form``, a key it allows
must not be — save for the one rule the schema states only in words (a period whose start is
after its end). A body that is not an object, or lacks ``text``, is refused by the parsing step.

What the gate refuses before the validator sees it (NUL, control characters, lone surrogates:
tests/contract/test_limits.py) is left out here.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import pytest
import schemathesis
from django.test import Client
from hypothesis import HealthCheck, Phase, assume, given, settings
from openapi_schema_validator import OAS30Validator, oas30_format_checker
from schemathesis import GenerationMode

from memory.contract import limits
from memory.contract.params import parse
from memory.contract.registry import PARAMS, VERBS
from memory.errors import MemoryServiceError
from memory.services.cycle import read_params

EXAMPLES_PER_CASE = 200

# The schema and the validator alone: no database engine or broker decides anything here, so CI
# runs this module in its first leg only (.ci/run).
pytestmark = pytest.mark.engine_free


@pytest.fixture(scope="module")
def spec(django_db_blocker: Any) -> dict[str, Any]:
    with django_db_blocker.unblock():
        response = Client().get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    return response.json()


_VALIDATORS: dict[str, OAS30Validator] = {}


def _allows(spec: dict[str, Any], schema: dict[str, Any], value: Any) -> bool:
    key = json.dumps(schema, sort_keys=True)
    if key not in _VALIDATORS:
        _VALIDATORS[key] = OAS30Validator(
            {**schema, "components": spec["components"]}, format_checker=oas30_format_checker
        )
    return _VALIDATORS[key].is_valid(value)


class OutOfScope(Exception):
    """A body the gate refuses before the validator reads it (tests/contract/test_limits.py)."""


def _reversed_period(value: Any) -> bool:
    """The validator's one rule the schema states in words only: start after end."""
    return isinstance(value, list) and any(
        isinstance(r, dict)
        and r.get("kind") == "calendar"
        and isinstance(r.get("start"), str)
        and isinstance(r.get("end"), str)
        and r["start"] > r["end"]
        for r in value
    )


def agree(spec: dict[str, Any], verb: str, body: Any, seen: dict[str, int] | None = None) -> None:
    try:
        body = json.loads(json.dumps(body))  # as it travels: escaped surrogate pairs join
    except (TypeError, ValueError):
        raise OutOfScope from None  # not JSON at all (bytes): the gate's bad_json
    if limits.inspect(body, "en", 32) is not None:
        raise OutOfScope
    request = spec["components"]["schemas"][f"{verb.capitalize()}Request"]
    if not isinstance(body, dict) or "text" not in body:
        assert not _allows(spec, {"$ref": f"#/components/schemas/{verb.capitalize()}Request"}, body)
        with pytest.raises(MemoryServiceError):
            read_params(verb, body)
        return
    parsed = parse(verb, body, default_lang="en", refuse=False)
    assert set(parsed.fates) == set(body)
    properties = request["properties"]
    for key, value in body.items():
        allowed = key in properties and _allows(spec, properties[key], value)
        if seen is not None:
            seen["allowed" if allowed else "forbidden"] += 1
        fate = parsed.fates[key]
        if allowed:
            assert fate.fate != "bad_form" or (key == "scope" and _reversed_period(value)), (
                f"the schema allows {key}={value!r}, the validator says: {fate.note}"
            )
        else:
            assert fate.fate == "bad_form", f"the schema forbids {key}={value!r}, fate: {fate}"


@pytest.mark.slow  # schemathesis's generation takes its time: about a minute in all
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
@pytest.mark.parametrize("verb", VERBS)
def test_generated_bodies_get_the_fate_the_schema_gives_them(spec, verb, mode):
    operation = schemathesis.openapi.from_dict(spec)[f"/api/v1/{verb}"]["POST"]
    seen = {"allowed": 0, "forbidden": 0}

    @settings(
        max_examples=EXAMPLES_PER_CASE,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(generation_mode=mode))
    def check(case: Any) -> None:
        try:
            agree(spec, verb, case.body, seen)
        except OutOfScope:
            assume(False)

    check()
    # Both ways were exercised: keys the schema allows, and (negative bodies) keys it forbids.
    assert seen["allowed"] > EXAMPLES_PER_CASE / 2
    if mode == GenerationMode.NEGATIVE:
        assert seen["forbidden"] > 10


# A fixed run id (a version 4 UUID): it is part of the boundary cases' test ids, which must be the
# same in every pytest-xdist worker that collects them.
RUN = "9fdfcb4c-0d78-443a-b9c0-5d2e8a61f3b7"
# Boundary cases, judged by the same oracle: each one a place where DRF's defaults and the schema
# used to part (numbers taken for strings, trimming before counting, lenient dates and UUIDs,
# unknown record keys, forms a scope record cannot have).
BOUNDARIES: dict[str, list[Any]] = {
    "text": [
        5,
        True,
        None,
        "",
        "   ",
        " x ",
        "x" * 20_000,
        "x" * 20_000 + " ",
        "x" * 20_001,
        "\u3000",
        ["x"],
        {"x": 1},
        "\t\n",
    ],
    "depth": ["deep", "DEEP", 1, None, ""],
    "trace": [True, False, "true", 1, 0, None],
    "thread": ["abc", "abc\n", "a b", "_abc", 123, "a" * 200, "a" * 201, "a.b:c-d_e", ""],
    "deny": ["нет", " ", 0],
    "said_at": [
        "2023-05-08T13:56:00Z",
        "2023-05-08t13:56:00z",
        "2023-05-08T13:56:00.123456789+03:00",
        "2016-12-31T23:59:60Z",  # a leap second
        "2023-05-08T13:56:00",  # no offset
        "2023-05-08 13:56:00Z",
        "2023-05-08",
        "2023-02-30T10:00:00Z",
        "0000-01-01T00:00:00Z",
        "0037-08-17T16:06:04.104046+23:28",  # once a 500 on PostgreSQL: now outside the years
        "1899-12-31T23:59:59Z",
        "1900-01-01T00:00:00+14:00",
        "2099-12-31T23:59:59-23:59",
        "2100-01-01T00:00:00Z",
        "９９９９-01-01T00:00:00Z",
        20230508,
        None,
        "",
    ],
    "create_table": ["команда", " ", "x" * 200, "x" * 201, 7],
    "lang": ["ru", "en", "de", "RU", None, ["ru"]],
    "scope": [
        [],
        [{"kind": "geo", "place": "Madrid"}],
        [{"kind": "geo", "place": " madrid "}],
        [{"kind": "geo", "place": "m" * 100}],
        [{"kind": "geo", "place": " " + "m" * 100}],
        [{"kind": "geo", "place": "new york"}],
        [{"kind": "geo", "place": "\u212a"}],  # KELVIN SIGN lower-cases to "k"
        [{"kind": "geo", "place": "madrid\n"}],
        [{"kind": "geo"}],
        [{"kind": "geo", "place": "x", "date": "2026-01-01"}],
        [{"kind": "calendar", "date": "2026-01-05"}],
        [{"kind": "calendar", "date": "2026-1-5"}],
        [{"kind": "calendar", "date": "20260105"}],
        [{"kind": "calendar", "date": "2026-02-30"}],
        [{"kind": "calendar", "date": "２０２６-01-05"}],
        [{"kind": "calendar", "date": "2026-01-05", "extra": 1}],
        [{"kind": "calendar", "start": "2026-01-01", "end": "2026-02-01"}],
        [{"kind": "calendar", "start": "2026-01-01"}],
        [{"kind": "calendar", "deadline": "2026-01-01"}],
        [{"kind": "calendar", "date": "2026-01-01", "deadline": "2026-01-02"}],
        [{"kind": "calendar", "place": "x"}],
        [{"kind": "weather", "place": "x"}],
        [{"kind": "calendar", "date": 20260105}],
        [{"kind": "geo", "place": "x"}] * 51,
        {"kind": "geo", "place": "x"},
        ["geo"],
        [None],
    ],
    "verdict": [
        {"run": RUN, "value": "confirm"},
        {"run": RUN},
        {"run": RUN.upper(), "value": "reject"},
        {"run": "{" + RUN + "}", "value": "confirm"},
        {"run": uuid.UUID(RUN).hex, "value": "confirm"},
        {"run": "urn:uuid:" + RUN, "value": "confirm"},
        {"run": RUN + "}", "value": "confirm"},
        {"run": RUN, "value": "confirm", "note": ""},
        {"run": RUN, "value": "confirm", "note": "n" * 2001},
        {"run": RUN, "value": "confirm", "extra": 1},
        {"run": RUN, "value": "maybe"},
        "confirm",
        None,
    ],
    "previous_results": [
        ["a"] * 20,
        ["a"] * 21,
        [""],
        [1],
        "a",
        [],
        [" "],
        [RUN],
        [f"notes:{RUN}"],
        [f"notes:{RUN}", "x:y"],
    ],
    "wait": [True, False, "true", 1, 0, None, []],
    "uploads": [
        [{"kind": "text", "name": "a"}],
        [{"kind": "text"}],
        [{"kind": "text", "name": " "}],
        [{"kind": "text", "name": "a", "description": ""}],
        [{"kind": "text", "name": "a", "media_type": ""}],
        [{"kind": "text", "name": "a", "size": 1}],
        [{"kind": "text", "name": "a"}] * 21,
    ],
    "colour": ["blue"],
}


def test_every_parameter_has_boundary_cases():
    assert {p.name for p in PARAMS} <= set(BOUNDARIES)


@pytest.mark.parametrize("verb", VERBS)
@pytest.mark.parametrize(
    "name, value",
    [(name, value) for name, values in BOUNDARIES.items() for value in values],
    ids=lambda v: repr(v)[:30] if not isinstance(v, str) or len(v) > 30 else v,
)
def test_boundary_cases_get_the_fate_the_schema_gives_them(spec, verb, name, value):
    body = {"text": "x", name: value} if name != "text" else {"text": value}
    if name == "text" and not _allows(
        spec, spec["components"]["schemas"]["RecallRequest"]["properties"]["text"], value
    ):
        # A text the schema forbids is bad_form, and with no phrase the request is refused.
        fate = parse(verb, body, default_lang="en", refuse=False).fates["text"]
        assert fate.fate == "bad_form"
        with pytest.raises(MemoryServiceError, match="text"):
            read_params(verb, body)
        return
    agree(spec, verb, body)


def test_a_reversed_period_is_the_one_rule_only_the_validator_states(spec):
    scope = [{"kind": "calendar", "start": "2026-03-01", "end": "2026-02-01"}]
    properties = spec["components"]["schemas"]["RememberRequest"]["properties"]
    assert _allows(spec, properties["scope"], scope)
    assert (
        "start is not after its end"
        in spec["components"]["schemas"]["ScopeRecordRequest"]["description"]
    )
    fate = parse("remember", {"text": "x", "scope": scope}, default_lang="en", refuse=False)
    assert fate.fates["scope"].fate == "bad_form"


CYRILLIC = re.compile("[а-яё]", re.IGNORECASE)


@pytest.mark.parametrize("verb", VERBS)
def test_every_fate_note_follows_lang(verb):
    """DRF's messages and ours, for every boundary case: Russian for ru, English for en."""
    checked = 0
    for name, values in BOUNDARIES.items():
        for value in values:
            body = {"text": "x", name: value} if name != "text" else {"text": value}
            ru = parse(verb, body, default_lang="ru", refuse=False).fates
            en = parse(verb, body, default_lang="en", refuse=False).fates
            for key, fate in ru.items():
                if not fate.note:
                    continue
                echoed = CYRILLIC.search(json.dumps(value, ensure_ascii=False))
                assert CYRILLIC.search(fate.note), (key, value, fate.note)
                assert echoed or not CYRILLIC.search(en[key].note), (key, value, en[key].note)
                assert fate.note != en[key].note
                checked += 1
    assert checked > 60
