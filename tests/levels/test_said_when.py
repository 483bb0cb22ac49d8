"""When a note was said, and a question that names a day or a month.

remember takes ``said_at`` (RFC 3339) for conversations brought in from the past; the note is
dated by it and takes its place in its conversation by it. A question naming a day or a month
(``language.periods``, read by code) lifts the notes told then, at level 1 and level 4 alike
(``notes.lift``)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from memory import language
from memory.knowledge.notes import lift
from memory.levels import RecallContext
from memory.levels import relational as tables_level
from memory.models import Note

TODAY = date(2026, 12, 4)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What did Audrey eat on October 24, 2023?", [(date(2023, 10, 24), date(2023, 10, 24))]),
        ("What did Jon find on 1 February, 2023?", [(date(2023, 2, 1), date(2023, 2, 1))]),
        ("What injury did Evan have in August 2023?", [(date(2023, 8, 1), date(2023, 8, 31))]),
        ("Что я ел в августе 2023 года?", [(date(2023, 8, 1), date(2023, 8, 31))]),
        ("Что мы решили 3 марта?", [(date(2026, 3, 3), date(2026, 3, 3))]),  # latest past one
        ("Что было 25 декабря?", [(date(2025, 12, 25), date(2025, 12, 25))]),  # not a future one
        ("Встреча 2024-02-29, а не 2023-02-30", [(date(2024, 2, 29), date(2024, 2, 29))]),
        ("May I ask what Nate likes?", []),  # a common word, with no day or year beside it
        ("We march on", []),
        ("Какой у меня любимый цвет?", []),
        ("What did we do last week?", []),  # a relative date is not read
    ],
)
def test_a_question_names_days_and_months(question, expected):
    assert language.periods(question, today=TODAY) == expected


def test_a_note_told_on_the_named_day_is_lifted(settings):
    settings.RANK_WHEN_WEIGHT, settings.RANK_NEIGHBOURHOOD_WEIGHT = 0.5, 0.0
    places = {"then": ("a", 0, date(2023, 10, 24)), "other day": ("a", 1, date(2023, 10, 25))}
    asked = language.periods("on October 24, 2023", today=TODAY)
    assert lift({"then": 0.6, "other day": 1.0}, places, asked) == {
        "then": pytest.approx(1.1),
        "other day": 1.0,
    }
    assert lift({"then": 0.6, "other day": 1.0}, places, ()) == {"then": 0.6, "other day": 1.0}


@pytest.mark.django_db
def test_said_at_dates_the_note_and_a_bad_moment_is_refused(bob, client_for):
    api = client_for(bob)
    answer = api.remember("Audrey: I ordered sushi tonight.", said_at="2023-10-24T19:30:00+02:00")
    note = Note.objects.get(pk=answer["stored"]["note"])
    assert note.created_at == datetime(2023, 10, 24, 17, 30, tzinfo=UTC)
    assert answer["params"]["said_at"]["fate"] == "accepted"
    for bad in ("2023-10-24", "24.10.2023 19:30", "2023-02-30T10:00:00Z", "2023-10-24T19:30:00"):
        refused = api.remember("Audrey: again.", said_at=bad)
        assert refused["params"]["said_at"]["fate"] == "bad_form", bad
    assert Note.objects.filter(architect=bob).count() == 5  # each kept, dated now


@pytest.mark.django_db
@pytest.mark.parametrize("weight", [0.5, 0.0])
def test_the_note_told_on_the_asked_day_comes_first(bob, client_for, settings, weight):
    settings.RANK_WHEN_WEIGHT = weight
    api = client_for(bob)
    wanted = api.remember("Audrey: I had pasta for dinner.", said_at="2023-10-24T19:00:00Z")
    api.remember("Boris: Nice weather.", said_at="2023-10-26T10:00:00Z")
    later = api.remember("Audrey: I had sushi for dinner.", said_at="2023-10-28T19:00:00Z")
    question = "What did Audrey have for dinner on October 24, 2023?"
    ctx = RecallContext.of(architect=bob, text=question, scope=[], lang="en")
    tables_level.search(ctx)  # level 1's ranked list, which level 4 fuses too
    ranked = [item["note"] for item in ctx.level1_ranked]
    assert len(ranked) == 2  # Boris shares no word
    # Without the lift the two Audrey notes tie on their words, and the newer goes first.
    first = wanted if weight else later
    assert ranked[0] == first["stored"]["note"]
