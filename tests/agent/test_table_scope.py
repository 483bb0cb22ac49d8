"""Grown table rows answer by the one scope rule (memory.scope), as notes, the graph and the
vectors do: a row holds where the remember that wrote it was said to hold (its note keeps the
request's scope), exact keys, no inheritance, and a row with no scope is unknown, not everywhere.
The tools run in-process exactly as the HTTP backends call them; no model is needed to call them.
"""

from __future__ import annotations

import pytest

from memory.agent import tools
from memory.models import Architect, Note, Run

pytestmark = pytest.mark.usefixtures("grown")

MADRID = [{"kind": "geo", "place": "madrid"}]
BARCELONA = [{"kind": "geo", "place": "barcelona"}]
SPAIN = [{"kind": "geo", "place": "spain"}]
TAXIS = {
    "Radio Taxi Madrid +34 914 473 232": MADRID,
    "Taxi Barcelona +34 932 250 000": BARCELONA,
    "Uber, где угодно": [],
}


def _remembered(architect: Architect, text: str, scope) -> Run:
    """A remember run whose note kept ``scope``, and whose tool call appended ``text``."""
    run = Run.objects.create(architect=architect, verb="remember", caller="t", channel="api")
    Note.objects.create(architect=architect, run=run, text=text, scope=scope)
    with tools.bound(tools.Scope(architect=architect, run=run)):
        tools.call("promote_to_list", {"kind": "такси", "items": [{"value": text}]})
    return run


def _read(architect: Architect, asked) -> dict:
    run = Run.objects.create(
        architect=architect,
        verb="recall",
        caller="t",
        channel="api",
        params={"scope": asked},
    )
    with tools.bound(tools.Scope(architect=architect, run=run)):
        return tools.call("read_table", {"table": "такси"})


@pytest.fixture
def taxis():
    architect = Architect.objects.create(name="alice")
    for text, scope in TAXIS.items():
        _remembered(architect, text, scope)
    return architect


def _rows(answer: dict) -> dict[str, dict]:
    return {r["value"]: r for r in answer["rows"]}


def test_a_madrid_question_gets_the_madrid_row_and_the_unscoped_one_as_unknown(taxis):
    answer = _read(taxis, MADRID)
    rows = _rows(answer)
    assert set(rows) == {"Radio Taxi Madrid +34 914 473 232", "Uber, где угодно"}
    assert rows["Radio Taxi Madrid +34 914 473 232"]["scope"] == MADRID
    assert "scope_unknown" not in rows["Radio Taxi Madrid +34 914 473 232"]
    assert rows["Uber, где угодно"]["scope_unknown"] == ["geo"]
    assert answer["rows_out_of_scope"] == 1


def test_madrid_is_not_spain(taxis):
    rows = _rows(_read(taxis, SPAIN))
    assert set(rows) == {"Uber, где угодно"}  # no inheritance: neither city's row answers Spain


def test_an_unscoped_question_sees_every_row_and_what_each_depends_on(taxis):
    answer = _read(taxis, [])
    rows = _rows(answer)
    assert set(rows) == set(TAXIS)
    assert rows["Taxi Barcelona +34 932 250 000"]["scope_missing"] == ["geo"]
    assert "scope_missing" not in rows["Uber, где угодно"]
    assert "asked_scope" not in answer


def test_a_row_whose_run_kept_no_note_is_unknown_where_not_everywhere(taxis):
    run = Run.objects.create(architect=taxis, verb="remember", caller="t", channel="api")
    with tools.bound(tools.Scope(architect=taxis, run=run)):
        tools.call("promote_to_list", {"kind": "такси", "items": [{"value": "Cabify"}]})
    rows = _rows(_read(taxis, MADRID))
    assert rows["Cabify"]["scope"] == [] and rows["Cabify"]["scope_unknown"] == ["geo"]
