"""The registry is the one list of parameters: each one, sent in a valid form, gets a fate."""

from __future__ import annotations

import uuid

import pytest

from memory.contract.params import parse
from memory.contract.registry import PARAMS, VERBS

# One valid example per registered parameter. A parameter added to the registry without an
# example here fails test_every_parameter_has_an_example: the test grows with the contract.
EXAMPLES = {
    "text": "У меня есть друг Дима",
    "depth": "deep",
    "trace": True,
    "thread": "8ebb61f7-f91d-47df-a1a9-42170cfba29c",
    "deny": str(uuid.uuid4()),  # the run whose conclusion is rejected; the words are the text
    "said_at": "2023-05-08T13:56:00+03:00",
    "scope": [
        {"kind": "geo", "place": "madrid"},
        {"kind": "calendar", "start": "2026-05-01", "end": "2026-08-31"},
    ],
    "create_table": "команда",
    "uploads": [{"kind": "text", "name": "notes.txt"}],
    "lang": "en",
    "verdict": {"run": str(uuid.uuid4()), "value": "confirm"},
    "previous_results": ["Дима — друг архитектора"],
    "wait": True,
}


def test_every_parameter_has_an_example():
    assert set(EXAMPLES) == {p.name for p in PARAMS}


@pytest.mark.parametrize("p", PARAMS, ids=lambda p: p.name)
def test_every_parameter_speaks_both_languages(p):
    for text in (p.label, p.help):
        assert text.ru.strip() and text.en.strip()
        assert text.ru != text.en


@pytest.mark.parametrize("p", PARAMS, ids=lambda p: p.name)
def test_a_not_supported_parameter_says_why_in_both_languages(p):
    for verb in p.verbs:
        capability = p.status(verb)
        if capability.status == "not_supported":
            assert capability.reason is not None
            assert capability.reason.ru and capability.reason.en


@pytest.mark.parametrize("verb", VERBS)
def test_every_parameter_sent_gets_a_fate(verb):
    parsed = parse(verb, EXAMPLES, default_lang="ru")
    assert set(parsed.fates) == set(EXAMPLES)
    for p in PARAMS:
        fate = parsed.fates[p.name].fate
        if verb not in p.verbs:
            assert fate == "bad_form"
        else:
            assert fate == p.status(verb).status, p.name


def test_bad_forms_are_named_per_parameter():
    parsed = parse(
        "recall",
        {"text": "x", "depth": "bottomless", "trace": "yes", "scope": "madrid", "lang": "de"},
        default_lang="en",
        refuse=False,  # a bad scope refuses the whole request; here only the fates are read
    )
    assert parsed.fates["text"].fate == "accepted"
    for name in ("depth", "trace", "scope", "lang"):
        assert parsed.fates[name].fate == "bad_form", name
        assert parsed.fates[name].note
    assert parsed.fates["depth"].note == '"bottomless" is not a valid choice'
    assert parsed.values == {"text": "x"}


@pytest.mark.parametrize(
    "record, reason",
    [
        ({"kind": "geo"}, "a geo record needs 'place'"),
        (
            {"kind": "geo", "place": "madrid", "date": "2026-01-01"},
            "a geo record carries no dates: date",
        ),
        ({"kind": "geo", "place": "new york"}, "'place' is a key"),
        ({"kind": "calendar"}, "a calendar record is exactly one of"),
        ({"kind": "calendar", "date": "2026-01-01", "deadline": "2026-02-01"}, "exactly one of"),
        (
            {"kind": "calendar", "start": "2026-03-01", "end": "2026-02-01"},
            "'start' is after 'end'",
        ),
        ({"kind": "calendar", "start": "2026-03-01"}, "exactly one of"),
        ({"kind": "weather", "place": "x"}, "kind"),
        ({"kind": "geo", "place": "madrid", "radius": 5}, "radius: unknown key"),
    ],
)
def test_each_broken_scope_record_is_refused_with_its_reason(record, reason):
    parsed = parse(
        "remember",
        {"text": "x", "scope": [{"kind": "geo", "place": "ok"}, record]},
        default_lang="en",
        refuse=False,
    )
    fate = parsed.fates["scope"]
    assert fate.fate == "bad_form"
    assert fate.index == 1
    assert reason in fate.note


def test_scope_records_are_normalised():
    parsed = parse(
        "remember",
        {
            "text": "x",
            "scope": [
                {"kind": "geo", "place": " Madrid "},
                {"kind": "calendar", "deadline": "2026-12-31"},
            ],
        },
        default_lang="en",
    )
    assert parsed.values["scope"] == [
        {"kind": "geo", "place": "madrid"},
        {"kind": "calendar", "deadline": "2026-12-31"},
    ]


def test_every_failing_list_item_is_named():
    records = [
        {"kind": "geo", "place": "ok"},
        {"kind": "geo"},
        {"kind": "calendar", "date": "2026-01-01"},
        {"kind": "calendar", "date": "2026-02-31"},
    ]
    parsed = parse("remember", {"text": "x", "scope": records}, default_lang="en", refuse=False)
    fate = parsed.fates["scope"]
    assert (fate.index, fate.indexes) == (1, [1, 3])
    assert "record #2 (index 1)" in fate.note and "record #4 (index 3)" in fate.note
