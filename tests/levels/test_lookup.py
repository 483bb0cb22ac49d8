"""Level 1's one look at its indexes (``memory.knowledge.lookup``): one statement per search on
either engine, over statistics kept exactly in the note's transaction."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import Count, Sum
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memory import relevance
from memory.knowledge import lookup
from memory.knowledge import notes as notes_service
from memory.levels import RecallContext
from memory.levels import relational as level1
from memory.models import Architect, Note, NoteKeyword
from memory.shape.tools import promote_to_list


def _tell(architect, texts, *, step=timedelta(seconds=5), sender="s"):
    start = timezone.now() - timedelta(days=1)
    for i, text in enumerate(texts):
        notes_service.note_create(
            architect=architect, text=text, scope=[], sender=sender, run=None, at=start + i * step
        )


def _counted(architect):
    return tuple(
        Architect.objects.filter(pk=architect.pk)
        .values_list("notes_count", "notes_length", "notes_near_length")
        .get()
    )


def _exact(architect):
    stats = Note.objects.filter(architect=architect).aggregate(
        n=Count("pk"), length=Sum("length"), near=Sum("near_length")
    )
    return (stats["n"], stats["length"] or 0, stats["near"] or 0)


def _lengths_in_step(architect):
    """Every posting carries its note's document lengths (the ranking reads them there)."""
    notes = {
        pk: (length, near)
        for pk, length, near in Note.objects.filter(architect=architect).values_list(
            "pk", "length", "near_length"
        )
    }
    postings = NoteKeyword.objects.filter(architect=architect).values_list(
        "note_id", "length", "near_length"
    )
    assert postings.exists()
    return all(notes[note] == (length, near) for note, length, near in postings) and _sizes_in_step(
        architect
    )


def _sizes_in_step(architect):
    """Every own posting carries how many own postings its note has (supersession reads it);
    a context-only posting carries 0."""
    own = Counter(
        NoteKeyword.objects.filter(architect=architect, own__gt=0).values_list("note_id", flat=True)
    )
    postings = NoteKeyword.objects.filter(architect=architect).values_list(
        "note_id", "own", "terms"
    )
    return all(terms == (own[note] if mine else 0) for note, mine, terms in postings)


def _ctx(architect, question):
    return RecallContext.of(
        architect=architect,
        text=question,
        scope=[],
        lang="en",
    )


@pytest.mark.django_db
def test_the_statistics_follow_every_write_and_a_rebuild(bob, alice):
    talk = [
        "Melanie: I painted a sunrise over the lake.",
        "Caroline: Lovely! Do you paint often?",
        "Melanie: Every weekend, it helps me relax.",
    ]
    _tell(bob, talk)  # one conversation: each note lends its terms to its neighbours
    _tell(bob, ["Caroline: The support group was powerful."], sender="other")
    _tell(alice, ["Alice: a note of another architect."])
    assert _counted(bob) == _exact(bob)
    assert _counted(bob)[2] > 0  # the context was counted, not only the notes
    assert _counted(alice) == _exact(alice) == (1, _exact(alice)[1], 0)
    assert _lengths_in_step(bob) and _lengths_in_step(alice)
    Architect.objects.filter(pk=bob.pk).update(notes_count=0, notes_length=0, notes_near_length=0)
    NoteKeyword.objects.filter(architect=bob).update(length=0, near_length=0, terms=7)
    notes_service.reindex(bob.pk)
    assert _counted(bob) == _exact(bob)
    assert _lengths_in_step(bob)
    weights = relevance.term_weights(bob, ["paint"])
    assert weights.notes == 4
    assert weights.average_length == pytest.approx(relevance.average_length(*_exact(bob)), rel=1e-9)


@pytest.mark.django_db
def test_a_level_1_search_over_notes_is_one_statement(bob):
    _tell(
        bob,
        [
            "Melanie: I painted a sunrise over the lake.",
            "Caroline: The support group was powerful.",
            "Melanie: Every weekend I paint with the kids.",
        ],
    )
    ctx = _ctx(bob, "What did Melanie paint over the lake?")
    with CaptureQueriesContext(connection) as captured:
        answer = level1.search(ctx)
    assert answer.found and "sunrise" in answer.text
    assert len(captured.captured_queries) == 1
    # …and what it read is what the separate reads give: the same weights.
    separate = relevance.term_weights(bob, ctx.keywords)
    assert ctx.weights().df == separate.df
    assert ctx.weights().notes == separate.notes
    assert ctx.weights().average_length == pytest.approx(separate.average_length)


def test_a_table_that_answers_adds_only_the_read_of_its_rows(grown, bob):
    promote_to_list(
        architect=bob,
        kind="команда",
        items=[
            {"value": "Юля", "fields": {"роль": "продакт-менеджер"}},
            {"value": "Дима", "fields": {"роль": "дизайнер"}},
        ],
    )
    _tell(bob, ["Дима любит чай."])
    ctx = _ctx(bob, "Кто у меня в команде продакт-менеджер?")
    ctx.lang = "ru"
    with CaptureQueriesContext(connection) as captured:
        answer = level1.search(ctx)
    assert answer.found and answer.form == "data"
    [table] = answer.data["tables"]
    assert [row["value"] for row in table["rows"]] == ["Юля"]
    assert len(captured.captured_queries) == 2  # the one look, then the rows that answer


@pytest.mark.django_db
def test_ties_past_the_limit_go_to_the_newer_notes(bob):
    # 15 notes say the same thing (equal scores), each in a conversation of its own; one says
    # more. The best comes first, then the newest of the equals, however many tie.
    start = timezone.now() - timedelta(days=1)
    told = []
    for i in range(15):
        told.append(
            notes_service.note_create(
                architect=bob,
                text="The lake was cold.",
                scope=[],
                sender=f"s{i}",
                run=None,
                at=start + timedelta(minutes=i),
            )
        )
    best = notes_service.note_create(
        architect=bob,
        text="The lake was cold, the lake was very cold.",
        scope=[],
        sender="best",
        run=None,
        at=start - timedelta(days=1),
    )
    hits = lookup.notes_search(architect=bob, terms=["lake", "cold"], limit=5)
    assert [hit.note.pk for hit in hits] == [best.pk] + [n.pk for n in reversed(told)][:4]
    assert hits[1].score == hits[4].score < hits[0].score
