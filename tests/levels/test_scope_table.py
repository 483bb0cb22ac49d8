"""Scope, one rule on every level and every store: exact keys, no inheritance, and a fact with
no scope answers a scoped question only as ``parameter_dependent``.

Each case stores one fact and asks one question; each level is asked directly (level 1 the full-
text index, level 3 the graph, level 4 the vectors), so a level cannot hide behind another.
Level 2 is the model: with no model configured it is skipped, and its tools read the same tables.
Runs on SQLite in leg 1 and on PostgreSQL in leg 2.
"""

from __future__ import annotations

import pytest

from memory.levels import graph as graph_level
from memory.levels import relational as tables_level
from memory.levels import vectors as vectors_level
from memory.levels.context import RecallContext
from memory.models import Note
from memory.stores.graph_types import note_of_chunk
from tests.conftest import decide_at

FACT = "Моя дочь Вера учится играть на виолончели."
QUESTIONS = {
    1: "Вера учится играть на виолончели?",
    3: "Вера учится играть на виолончели?",
    4: "На каком инструменте занимается дочка?",
}
MADRID = [{"kind": "geo", "place": "madrid"}]
SPAIN = [{"kind": "geo", "place": "spain"}]
MAY = [{"kind": "calendar", "date": "2024-05-10"}]
MAY_ASKED = [{"kind": "calendar", "start": "2024-05-01", "end": "2024-05-31"}]
JUNE_ASKED = [{"kind": "calendar", "start": "2024-06-01", "end": "2024-06-30"}]

# (stored scope, asked scope, what the level must say)
CASES = {
    "same place": (MADRID, MADRID, "answers"),
    "no inheritance: Madrid is not Spain": (MADRID, SPAIN, "excluded"),
    "unscoped fact, scoped question": ([], MADRID, "depends"),
    "scoped fact, unscoped question": (MADRID, [], "depends"),
    "day inside the asked month": (MAY, MAY_ASKED, "answers"),
    "day outside the asked month": (MAY, JUNE_ASKED, "excluded"),
    "both unscoped": ([], [], "answers"),
}
SEARCH = {1: tables_level.search, 3: graph_level.search, 4: vectors_level.search}


def _ids(outcome) -> set[str]:
    data = outcome.data or {}
    items = data.get("notes", []) + data.get("hits", []) + outcome.candidates
    found = {str(i.get("note")) for i in items if i.get("note")}
    found |= {n for n in (note_of_chunk(c.get("source")) for c in data.get("chunks", [])) if n}
    return found


@pytest.mark.django_db
@pytest.mark.parametrize("level", [1, 3, 4])
@pytest.mark.parametrize("case", list(CASES))
def test_scope_on_every_level(level, case, bob, client_for, settings):
    stored, asked, expected = CASES[case]
    api = client_for(bob, "deep")
    api.remember(FACT, **({"scope": stored} if stored else {}))
    api.remember("Брат Антон работает хирургом в областной больнице.")  # a bystander
    note = Note.objects.get(text=FACT)
    question = QUESTIONS[level]
    ctx = RecallContext.of(
        architect=bob,
        text=question,
        scope=asked,
        lang="en",
    )
    if level == 4:
        # Level 4's paraphrase must count as an answer where the fact holds, so that scope alone
        # decides here: the decision's threshold (fitted by bench/decision.py, tested in
        # test_decision) goes just under the probability the fact's list gets where it holds.
        where = RecallContext.of(architect=bob, text=question, scope=stored, lang="en")
        verdict = next(t for t in SEARCH[4](where).trace if t.get("event") == "decision")
        decide_at(settings, "meaning", verdict["verdict"]["p"] - 0.001)
    outcome = SEARCH[level](ctx)
    if expected == "excluded":
        assert not outcome.found
        assert str(note.pk) not in _ids(outcome)
    elif expected == "depends":
        assert outcome.found, outcome.report
        assert outcome.kind == "parameter_dependent"
        assert outcome.missing and outcome.missing[0]["dimension"] == "geo"
        assert str(note.pk) in _ids(outcome)
    else:
        assert outcome.found, outcome.report
        assert outcome.kind != "parameter_dependent"
        assert str(note.pk) in _ids(outcome)
