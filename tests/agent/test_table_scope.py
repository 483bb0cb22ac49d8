"""Grown table rows answer by the one scope rule (memory.scope), as notes, the graph and the
vectors do: a row holds where the remember that wrote it was said to hold (its note keeps the
request's scope), exact keys, no inheritance, and a row with no scope is unknown, not everywhere.
The tools run in-process exactly as the HTTP backends call them; no model is needed to call them.
Level 1 reads the same rows through the same rule (``memory.shape.selectors.in_scope_all``).
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
    with tools.bound(tools.Tenant(architect=architect, run=run)):
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
    with tools.bound(tools.Tenant(architect=architect, run=run)):
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
    with tools.bound(tools.Tenant(architect=taxis, run=run)):
        tools.call("promote_to_list", {"kind": "такси", "items": [{"value": "Cabify"}]})
    rows = _rows(_read(taxis, MADRID))
    assert rows["Cabify"]["scope"] == [] and rows["Cabify"]["scope_unknown"] == ["geo"]


# --- level 1 reads grown tables by the same rule -------------------------------------------------

QUESTION = "Какие такси?"


def _level1(architect: Architect, asked) -> dict:
    from memory.levels import relational as tables_level
    from memory.levels.context import RecallContext

    ctx = RecallContext.of(
        architect=architect,
        text=QUESTION,
        lang="ru",
        scope=asked,
    )
    outcome = tables_level.search(ctx)
    (table,) = [t for t in outcome.data["tables"] if t["name"].endswith("taksi")]
    return {"outcome": outcome, "rows": {r["value"]: r for r in table["rows"]}}


def test_level_1_shows_a_madrid_row_for_madrid_and_never_for_spain(taxis):
    madrid = _level1(taxis, MADRID)
    assert set(madrid["rows"]) == {"Radio Taxi Madrid +34 914 473 232", "Uber, где угодно"}
    assert madrid["rows"]["Uber, где угодно"]["scope_unknown"] == ["geo"]
    # An unscoped row among the answer's values makes it parameter-dependent, and it says why.
    assert madrid["outcome"].kind == "parameter_dependent"
    assert any(m["dimension"] == "geo" for m in madrid["outcome"].missing)
    assert "Мадрид" in madrid["outcome"].text or "madrid" in madrid["outcome"].text.lower()

    spain = _level1(taxis, SPAIN)
    assert set(spain["rows"]) == {"Uber, где угодно"}  # Madrid ≠ Spain, no inheritance
    assert spain["outcome"].kind == "parameter_dependent"


def test_level_1_unscoped_question_names_what_the_rows_depend_on(taxis):
    every = _level1(taxis, [])
    assert set(every["rows"]) == set(TAXIS)
    assert every["outcome"].kind == "parameter_dependent"  # two rows hold in one city only
    assert [m["dimension"] for m in every["outcome"].missing] == ["geo"]


def test_a_lone_madrid_row_after_more_barcelona_rows_than_are_shown_still_answers(taxis):
    from memory.levels.relational.grown import MAX_ROWS

    run = Run.objects.create(architect=taxis, verb="remember", caller="t", channel="api")
    Note.objects.create(architect=taxis, run=run, text="такси Барселоны", scope=BARCELONA)
    many = [{"value": f"Taxi Barcelona {i}"} for i in range(MAX_ROWS + 5)]
    with tools.bound(tools.Tenant(architect=taxis, run=run)):
        tools.call("promote_to_list", {"kind": "такси", "items": many})
    _remembered(taxis, "Tele Taxi Madrid +34 913 711 131", MADRID)

    madrid = _level1(taxis, MADRID)
    assert "Tele Taxi Madrid +34 913 711 131" in madrid["rows"]
    assert not any(value.startswith("Taxi Barcelona") for value in madrid["rows"])
    (entry,) = [e for e in madrid["outcome"].report if e.source.endswith("taksi")]
    assert "56 вне охвата вопроса" in entry.note  # 55 added here and the one from the fixture


def test_a_single_value_holds_where_its_remember_was_said_to_hold(taxis):
    run = Run.objects.create(architect=taxis, verb="remember", caller="t", channel="api")
    Note.objects.create(architect=taxis, run=run, text="Мой врач в Мадриде — Гарсия", scope=MADRID)
    with tools.bound(tools.Tenant(architect=taxis, run=run)):
        tools.call("make_new_kind", {"kind": "врач", "value": "Гарсия"})

    def root(asked) -> dict:
        ask = Run.objects.create(
            architect=taxis, verb="recall", caller="t", channel="api", params={"scope": asked}
        )
        with tools.bound(tools.Tenant(architect=taxis, run=ask)):
            return tools.call("read_table", {"table": "root"})

    assert root(MADRID)["values"]["врач"]["scope"] == MADRID
    assert root(SPAIN)["values"] == {} and root(SPAIN)["values_out_of_scope"] == 1
    assert root([])["values"]["врач"]["scope_missing"] == ["geo"]
