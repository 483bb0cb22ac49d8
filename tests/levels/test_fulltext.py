"""Level 1's full-text index: BM25 rarity ranking, conversation context, the answer bar.

Runs on whichever engine the run uses (SQLite in leg 1, PostgreSQL in leg 2); the scores are
checked against the plain-Python BM25 the retrieval bench ranks all of LoCoMo with
(``bench/retrieval.py`` ``ContextBM25``), so both engines are held to the same numbers, to
each other, and the bench's figures to the memory's own ranking.
"""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.test import override_settings
from django.utils import timezone

from memory import language
from memory.knowledge import lookup
from memory.knowledge import notes as notes_service
from memory.models import Architect, Note, NoteKeyword

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from retrieval import ContextBM25  # noqa: E402


def _store(architect, texts, *, sender="bob-key", start=None, step=timedelta(seconds=5)):
    start = start or timezone.now() - timedelta(days=1)
    made = []
    for i, text in enumerate(texts):
        note = notes_service.note_create(
            architect=architect, text=text, scope=[], sender=sender, run=None, at=start + i * step
        )
        made.append(note)
    return made


TURNS = [
    "Caroline: I went to the LGBTQ support group yesterday and it was powerful.",
    "Melanie: That sounds amazing! What happened there?",
    "Caroline: The transgender stories were so inspiring, I felt accepted.",
    "Melanie: I am proud of you. By the way, I painted a sunrise over the lake.",
    "Caroline: Lovely! Do you paint often?",
    "Melanie: Every weekend, painting helps me relax after work with the kids.",
    "Caroline: I am thinking about adoption agencies, researching them now.",
    "Melanie: Adoption is a big step, you would be a great mom.",
]


@pytest.mark.django_db
def test_the_ranking_is_bm25_with_context_on_this_engine(bob):
    made = _store(bob, TURNS)
    question = "What did Melanie paint over the lake?"
    terms = language.keywords(question)
    hits = lookup.notes_search(architect=bob, terms=terms, limit=20)
    expected = ContextBM25(TURNS).scores(question)
    assert len(expected) >= 4  # the question's words are in several turns and their neighbours
    by_pk = {h.note.pk: h.score for h in hits}
    for i, note in enumerate(made):
        assert by_pk.get(note.pk, 0.0) == pytest.approx(expected.get(i, 0.0), rel=1e-6, abs=1e-9)
    assert hits[0].note.text == TURNS[3]  # the note itself, first
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


@pytest.mark.django_db
def test_a_rare_word_outranks_a_common_one(bob):
    texts = [f"Встреча с командой по проекту номер {i}." for i in range(8)]
    texts.append("Встреча с нотариусом назначена на пятницу.")
    _store(bob, texts, step=timedelta(hours=3))  # separate conversations: no context
    terms = language.keywords("Когда встреча с нотариусом?")
    hits = lookup.notes_search(architect=bob, terms=terms)
    assert hits[0].note.text == texts[-1]
    assert hits[0].coverage == pytest.approx(1.0)
    assert hits[1].coverage < 0.5  # «встреча» alone: common, light


@pytest.mark.django_db
def test_a_turn_is_found_by_its_neighbours_words_and_is_itself_returned(bob):
    _store(bob, TURNS)
    terms = language.keywords("Who will be a great mom after adoption agencies?")
    hits = lookup.notes_search(architect=bob, terms=terms)
    texts = [h.note.text for h in hits]
    assert TURNS[7] in texts[:2]
    # A turn holding none of the words is reached through its neighbours only, and is returned
    # as itself (its own text), with the words it borrowed named.
    helper = [h for h in hits if h.note.text == TURNS[5]]
    assert helper and helper[0].matched == [] and helper[0].near


@pytest.mark.django_db
def test_context_stays_inside_one_conversation(bob):
    long_ago = timezone.now() - timedelta(days=30)
    _store(bob, ["Мы обсуждали отпуск в Португалии."], start=long_ago)
    [later] = _store(bob, ["Билеты куплены."])
    [other] = _store(bob, ["Португальский сыр закончился."], sender="someone-else")
    assert later.keywords.filter(own=0).count() == 0  # a month apart: another conversation
    assert other.keywords.filter(own=0).count() == 0  # another sender: another conversation


POSTING = ("note_id", "lemma", "own", "near", "length", "near_length", "terms")
PLACE = ("pk", "length", "near_length", "talk", "position")


@pytest.mark.django_db
def test_a_write_in_a_conversation_reads_no_neighbour_again_by_its_key(bob):
    """The neighbours are read once, with every field the write uses: a deferred field read
    later is one more query per neighbour, a round trip each on PostgreSQL."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    _store(bob, TURNS[:3], start=timezone.now() - timedelta(minutes=1))
    with CaptureQueriesContext(connection) as captured:
        (note,) = _store(bob, TURNS[3:4], start=timezone.now())
    assert Note.objects.get(pk=note.pk).position == 3  # it went on the conversation
    table = Note._meta.db_table
    by_key = [
        q["sql"]
        for q in captured.captured_queries
        if q["sql"].startswith("SELECT") and f'FROM "{table}" WHERE "{table}"."id" = ' in q["sql"]
    ]
    assert by_key == []


@pytest.mark.postgres_only  # NUMERIC is PostgreSQL's; SQLite's floats are REAL
@pytest.mark.django_db
def test_the_ranking_reckons_in_doubles_not_numeric(bob):
    """Django's psycopg binds a float into the text, and PostgreSQL reads a bare ``0.3`` as
    NUMERIC: at 100k notes summing the postings in NUMERIC took 320 ms against 42 ms reading
    them (PASSPORT.md §18). The plan of level 1's statement holds no NUMERIC."""
    from django.db import connection

    _store(bob, TURNS)
    terms = language.keywords("What did Melanie paint over the lake?")
    sql, params = lookup.statement(bob, terms, limit=5, scope=[], shape=True)
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN VERBOSE " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "double precision" in plan  # the ranking is in the plan, and in doubles
    assert "numeric" not in plan


@pytest.mark.django_db
@pytest.mark.parametrize("chunk", [2, 200])  # neighbours across the chunks' edges, and one chunk
def test_reindex_rebuilds_the_same_postings(bob, monkeypatch, chunk):
    monkeypatch.setattr(notes_service, "REINDEX_CHUNK", chunk)
    _store(bob, TURNS)
    before = sorted(NoteKeyword.objects.filter(architect=bob).values_list(*POSTING))
    places = sorted(Note.objects.filter(architect=bob).values_list(*PLACE))
    stats = Architect.objects.values_list("notes_count", "notes_length", "notes_near_length")
    counted = stats.get(pk=bob.pk)
    NoteKeyword.objects.filter(architect=bob).update(near=0, near_length=0, terms=0)
    NoteKeyword.objects.filter(architect=bob, lemma=before[0][1]).delete()
    Note.objects.filter(architect=bob).update(length=0, near_length=0, talk=None, position=0)
    assert notes_service.reindex(bob.pk) == len(TURNS)
    assert sorted(NoteKeyword.objects.filter(architect=bob).values_list(*POSTING)) == before
    assert sorted(Note.objects.filter(architect=bob).values_list(*PLACE)) == places
    assert stats.get(pk=bob.pk) == counted


@pytest.mark.django_db
def test_a_shared_common_word_is_not_an_answer(bob_api):
    bob_api.remember("Мой любимый цвет синий.")
    bob_api.remember("Дочь Вера учится играть на виолончели.")
    answer = bob_api.recall("Какой у меня любимый фрукт?")
    assert answer["answer"]["found"] is False
    assert answer["kind"] == "probabilistic"
    candidates = answer["answer"]["data"]["candidates"]
    assert candidates[0]["text"] == "Мой любимый цвет синий."
    assert candidates[0]["coverage"] < 0.75
    # and the same memory answers what it was told
    told = bob_api.recall("Какой мой любимый цвет?")
    assert told["answer"]["found"] is True
    assert told["answer"]["data"]["notes"][0]["text"] == "Мой любимый цвет синий."


@pytest.mark.django_db
@pytest.mark.parametrize("bar", [0.5, 0.9])
def test_the_answer_bar_comes_from_settings(bob_api, bar):
    bob_api.remember("Пароль от домашнего вайфая: sunrise42.")
    with override_settings(ANSWER_MIN_COVERAGE=bar):
        answer = bob_api.recall("Какой пароль от вайфая на даче?")
    # «дача» was never told and weighs the most: about 0.45 of the question is held.
    assert answer["answer"]["found"] is (bar < 0.45)


@pytest.mark.django_db
def test_an_unscoped_fact_answers_a_scoped_question_only_as_parameter_dependent(bob_api):
    bob_api.remember("Номер такси: +34 915 00 00 00.")
    answer = bob_api.recall("Какой номер такси?", scope=[{"kind": "geo", "place": "Madrid"}])
    assert answer["answer"]["found"] is True
    assert answer["kind"] == "parameter_dependent"
    assert [m["dimension"] for m in answer["missing"]] == ["geo"]
    assert "madrid" in answer["missing"][0]["why"].lower()


@pytest.mark.django_db
def test_a_fact_bound_elsewhere_never_answers(bob_api):
    bob_api.remember("Номер такси: +34 915 00 00 00.", scope=[{"kind": "geo", "place": "Madrid"}])
    answer = bob_api.recall("Какой номер такси?", scope=[{"kind": "geo", "place": "Spain"}])
    assert answer["answer"]["found"] is False
    assert "candidates" not in answer["answer"].get("data", {})
    right = bob_api.recall("Какой номер такси?", scope=[{"kind": "geo", "place": "Madrid"}])
    assert right["answer"]["found"] is True and right["kind"] == "affirmative"


@pytest.mark.django_db
def test_the_scope_narrows_the_query_itself_so_look_alikes_elsewhere_cannot_crowd_it_out(bob):
    # 45 equally good notes bound to Barcelona, newer than the one Madrid note: ranked first by
    # the words, they would fill the 40 rows read before a filter applied afterwards.
    madrid = [{"kind": "geo", "place": "madrid"}]
    start = timezone.now() - timedelta(days=1)
    notes_service.note_create(
        architect=bob, text="Номер такси: Radio Taxi.", scope=madrid, sender="s", run=None, at=start
    )
    for i in range(45):
        notes_service.note_create(
            architect=bob,
            text=f"Номер такси: Taxi {i}.",
            scope=[{"kind": "geo", "place": "barcelona"}],
            sender=f"s{i}",
            run=None,
            at=start + timedelta(minutes=i + 1),
        )
    terms = language.keywords("Номер такси?")
    hits = lookup.notes_search(architect=bob, terms=terms, limit=40, scope=madrid)
    assert [h.note.text for h in hits] == ["Номер такси: Radio Taxi."]
    may = [{"kind": "calendar", "start": "2024-05-01", "end": "2024-05-31"}]
    assert not lookup.notes_search(architect=bob, terms=terms, limit=40, scope=madrid + may)[
        1:
    ]  # the unbound-on-calendar Madrid note may fit; nothing else does
    everywhere = lookup.notes_search(architect=bob, terms=terms, limit=50)
    assert len(everywhere) == 46


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("stored", "asked"),
    [
        ([{"kind": "geo", "place": "madrid"}], [{"kind": "geo", "place": "spain"}]),
        ([{"kind": "geo", "place": "madrid"}], [{"kind": "geo", "place": "madrid"}]),
        ([], [{"kind": "geo", "place": "madrid"}]),
        (
            [{"kind": "calendar", "date": "2024-05-10"}],
            [{"kind": "calendar", "date": "2024-05-10"}],
        ),
        (
            [{"kind": "calendar", "date": "2024-05-10"}],
            [{"kind": "calendar", "start": "2024-06-01", "end": "2024-06-30"}],
        ),
        (
            [{"kind": "calendar", "deadline": "2024-05-10"}],
            [{"kind": "calendar", "start": "2024-05-01", "end": "2024-05-31"}],
        ),
        (
            [{"kind": "calendar", "start": "2024-04-01", "end": "2024-04-30"}],
            [{"kind": "calendar", "start": "2024-05-01", "end": "2024-05-31"}],
        ),
    ],
)
def test_the_query_keeps_exactly_what_the_scope_rule_lets_fit(bob, stored, asked):
    from memory import scope as scopes

    notes_service.note_create(
        architect=bob, text="Номер такси: Radio Taxi.", scope=stored, sender="s", run=None
    )
    terms = language.keywords("Номер такси?")
    hits = lookup.notes_search(architect=bob, terms=terms, scope=asked)
    assert bool(hits) is scopes.fits(stored, asked)


@pytest.mark.django_db
def test_a_question_word_read_two_ways_is_read_as_the_memory_knows_it(bob, client_for):
    """«до сантехника» is the plumbing or the plumber to the dictionary (the plumbing first);
    the memory that knows the plumber reads it so, and level 1 finds him."""
    from memory.levels.context import RecallContext

    question = "Как дозвониться до сантехника?"
    assert language.other_readings(question) == {"сантехника": ["сантехник"]}
    asked = RecallContext.of(architect=bob, text=question, scope=[], lang="ru")
    assert asked.keywords == ["дозвониться", "сантехника"]  # nothing held: the first reading
    api = client_for(bob, "standard")
    api.remember("Сантехник Геннадий, если что-то течёт: +7 926 118-40-25.")
    asked = RecallContext.of(architect=bob, text=question, scope=[], lang="ru")
    assert asked.keywords == ["дозвониться", "сантехник"]
    assert asked.weighed is not None and asked.weighed.df["сантехник"] == 1  # one look, kept
    answer = api.recall(question)
    data = answer["answer"].get("data") or {}
    texts = [i.get("text") for k in ("notes", "candidates") for i in data.get(k, [])]
    assert texts and texts[0].startswith("Сантехник Геннадий")
    # A memory that holds the first reading keeps it.
    api.remember("Вся сантехника в мастерской — Grohe.")
    asked = RecallContext.of(architect=bob, text=question, scope=[], lang="ru")
    assert asked.keywords == ["дозвониться", "сантехника"]
