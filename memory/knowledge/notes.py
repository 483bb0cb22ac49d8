"""Verbatim notes and their full-text index: written first on every remember, searched at level 1.

The index is an inverted list of postings (``NoteKeyword``: note, term, count) over terms built by
code (``memory.language``: Russian lemmas, English stems, no function words). A note is indexed
with its own terms and, counted apart, the terms of the notes remembered just before and after it
in the same conversation — the same sender, no longer than ``NOTES_CONTEXT_GAP_SECONDS`` apart —
so "What did she adopt?" finds the turn "Yes, last week!" that answers a turn about adoption.
The ranking is BM25 computed by one SQL statement on either engine, so SQLite and PostgreSQL rank
alike; the context counts at ``NOTES_CONTEXT_WEIGHT``. Postings change in the transaction that
writes the note.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from datetime import date, datetime, timedelta
from typing import Any, TypeVar

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, F, Sum
from django.utils import timezone

from memory import language
from memory.knowledge.supersede import supersede
from memory.models import Architect, Note, NoteKeyword, Run

REINDEX_CHUNK = 200  # notes rebuilt per transaction (the write lock's span)
REINDEX_BATCH = 2000  # postings per INSERT (SQLite binds at most 32,766 values)


def note_create(
    *,
    architect: Architect,
    text: str,
    scope: Sequence[dict[str, Any]],
    sender: str,
    run: Run | None,
    terms: Sequence[str] | None = None,
    entities: dict[str, Any] | None = None,
    at: datetime | None = None,
) -> Note:
    """The note and its postings. Callers inside a transaction pass ``terms`` (and ``entities``)
    computed beforehand, so the write lock is held for the inserts only, never for morphology.
    ``at`` is when it was said, for imports of past conversations; now by default."""
    if terms is None:
        terms = language.terms(text)
    with transaction.atomic():
        _one_writer(architect)
        return _create(architect, text, scope, sender, run, terms, entities, at)


def _one_writer(architect: Architect) -> None:
    """One note of an architect is written at a time: a new note changes its neighbours'
    postings and may supersede earlier notes, so two concurrent writers would update the same
    rows in opposite orders (PostgreSQL: deadlock, or a duplicate posting). The lock is the
    architect's row, held to the end of the caller's transaction — the inserts only, since the
    terms come computed. Other architects write in parallel; SQLite has one writer anyway."""
    list(Architect.objects.select_for_update().filter(pk=architect.pk).values_list("pk"))


def _create(
    architect: Architect,
    text: str,
    scope: Sequence[dict[str, Any]],
    sender: str,
    run: Run | None,
    terms: Sequence[str],
    entities: dict[str, Any] | None,
    at: datetime | None,
) -> Note:
    note = Note(
        architect=architect,
        text=text,
        scope=list(scope),
        sender=sender,
        run=run,
        entities=entities or {},
        length=len(terms),
        **({"created_at": at} if at is not None else {}),
    )
    neighbours = _before(note)
    if neighbours:  # the conversation goes on
        note.talk = neighbours[0].talk or neighbours[0].pk
        note.position = neighbours[0].position + 1
    else:
        note.talk = note.pk
    note.save(force_insert=True)
    own = Counter(terms)
    near = _own_terms(neighbours)
    _post(note, own, near)
    for earlier in neighbours:  # the new note is one of the next neighbours of each of these
        _lend(earlier, own)
    lent = sum(own.values()) * len(neighbours) if own else 0
    Architect.objects.filter(pk=architect.pk).update(
        notes_count=F("notes_count") + 1,
        notes_length=F("notes_length") + len(terms),
        notes_near_length=F("notes_near_length") + sum(near.values()) + lent,
    )
    note.replaced = supersede(note, list(own))  # type: ignore[attr-defined]
    return note


def _before(note: Note) -> list[Note]:
    """The notes just before ``note`` in its conversation, newest first."""
    gap = timedelta(seconds=settings.NOTES_CONTEXT_GAP_SECONDS)
    found: list[Note] = []
    edge = note
    candidates = (
        Note.objects.filter(
            architect_id=note.architect_id,
            sender=note.sender,
            created_at__lte=note.created_at,
            created_at__gte=note.created_at - gap * settings.NOTES_CONTEXT_NEIGHBOURS,
        )
        .exclude(pk=note.pk)
        .order_by("-created_at")
        # architect_id too: _lend's postings name it, and a deferred field is one more query.
        .only(
            "pk",
            "architect_id",
            "sender",
            "created_at",
            "text",
            "talk",
            "position",
            "length",
            "near_length",
        )[: settings.NOTES_CONTEXT_NEIGHBOURS]
    )
    for candidate in candidates:
        if not _goes_on(candidate, edge):
            break
        found.append(candidate)
        edge = candidate
    return found


def _goes_on(earlier: Any, later: Any) -> bool:
    """Is ``later`` told in the same conversation as ``earlier``, the note just before it? The
    same sender, no longer than ``NOTES_CONTEXT_GAP_SECONDS`` apart: the one rule ``_before``
    walks back by and ``conversations`` cuts by."""
    gap = timedelta(seconds=settings.NOTES_CONTEXT_GAP_SECONDS)
    return earlier.sender == later.sender and later.created_at - earlier.created_at <= gap


def in_context(note: Note) -> str:
    """What the ``context`` vectors embed for ``note``: the note read after the one told just
    before it in its conversation. "Yes, last week!" means "adopted a dog last week" only
    beside the question it answers."""
    before = _before(note)[:1]
    return window(before[0].text if before else "", note.text)


def window(before: str, text: str) -> str:
    """A text read after the tail (``NOTES_CONTEXT_CHARS``) of the one told before it."""
    before = before[-settings.NOTES_CONTEXT_CHARS :] if before else ""
    return f"{before}\n{text}" if before else text


def _own_terms(notes: Sequence[Note]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for lemma, own in NoteKeyword.objects.filter(note__in=list(notes), own__gt=0).values_list(
        "lemma", "own"
    ):
        counts[lemma] += own
    return counts


def _post(note: Note, own: Counter[str], near: Counter[str]) -> None:
    """``note``'s postings: its own terms and its neighbours' (``note.length`` is set)."""
    postings = _postings(note, own, near)
    if note.near_length:
        Note.objects.filter(pk=note.pk).update(near_length=note.near_length)
    NoteKeyword.objects.bulk_create(postings)


def _postings(note: Note, own: Counter[str], near: Counter[str]) -> list[NoteKeyword]:
    """The postings ``note`` holds (one rule for a write and for ``reindex``); sets its
    ``near_length``."""
    near_length = sum(near.values())
    note.near_length = near_length
    return [
        NoteKeyword(
            architect_id=note.architect_id,
            note=note,
            lemma=lemma,
            own=own.get(lemma, 0),
            near=near.get(lemma, 0),
            length=note.length,
            near_length=near_length,
            terms=len(own) if own.get(lemma, 0) else 0,
        )
        for lemma in {**own, **near}
    ]


def _lend(note: Note, terms: Counter[str]) -> None:
    """Add a neighbour's terms to ``note``'s context postings; its context grows by as many,
    on the note and on each of its postings."""
    if not terms:
        return
    added = sum(terms.values())
    existing = dict(
        NoteKeyword.objects.filter(note=note, lemma__in=list(terms)).values_list("lemma", "pk")
    )
    if existing:
        # One prepared statement run per posting: Django's bulk_update builds a CASE expression
        # through the ORM, ~4 ms of Python a write at 30k notes for what SQLite does in 0.3 ms.
        meta = NoteKeyword._meta
        with connection.cursor() as cursor:
            cursor.executemany(
                f"UPDATE {meta.db_table} SET {meta.get_field('near').column} = "
                f"{meta.get_field('near').column} + %s WHERE {meta.pk.column} = %s",
                [(terms[lemma], pk) for lemma, pk in existing.items()],
            )
    Note.objects.filter(pk=note.pk).update(near_length=F("near_length") + added)
    NoteKeyword.objects.filter(note=note).update(near_length=F("near_length") + added)
    note.near_length += added
    NoteKeyword.objects.bulk_create(
        [
            NoteKeyword(
                architect_id=note.architect_id,
                note=note,
                lemma=lemma,
                own=0,
                near=count,
                length=note.length,
                near_length=note.near_length,
            )
            for lemma, count in terms.items()
            if lemma not in existing
        ]
    )


def reindex(architect_id: int) -> int:
    """Rebuild one architect's postings from the notes' texts (after the morphology or the
    context settings change, or after notes were written in bulk). ``REINDEX_CHUNK`` notes of a
    conversation per transaction, their postings inserted in one statement each batch: the
    architect's write lock is held for one chunk at a time, never for the whole memory; returns
    the number of notes."""
    notes = list(
        Note.objects.filter(architect_id=architect_id)
        .order_by("sender", "created_at")
        .only("pk", "text", "sender", "created_at", "architect_id")
    )
    analysed: dict[str, Counter[str]] = {}  # a text told twice is analysed once
    for n in notes:  # before any lock is taken
        if n.text not in analysed:
            analysed[n.text] = Counter(language.terms(n.text))
    own = {n.pk: analysed[n.text] for n in notes}
    width = settings.NOTES_CONTEXT_NEIGHBOURS
    pk, name = Note._meta.pk, connection.ops.quote_name
    update = (
        f"UPDATE {name(Note._meta.db_table)} SET "
        + ", ".join(
            f"{name(Note._meta.get_field(f).column)} = %s"
            for f in ("length", "near_length", "talk", "position")
        )
        + f" WHERE {name(pk.column)} = %s"
    )
    for conversation in conversations(notes):
        for first in range(0, len(conversation), REINDEX_CHUNK):
            chunk = conversation[first : first + REINDEX_CHUNK]
            postings: list[NoteKeyword] = []
            rows = []
            for i, note in enumerate(chunk, first):
                near: Counter[str] = Counter()
                for other in (
                    conversation[max(0, i - width) : i] + conversation[i + 1 : i + 1 + width]
                ):
                    near.update(own[other.pk])
                note.length = sum(own[note.pk].values())
                postings += _postings(note, own[note.pk], near)
                rows.append(
                    (
                        note.length,
                        note.near_length,
                        pk.get_db_prep_value(conversation[0].pk, connection),
                        i,
                        pk.get_db_prep_value(note.pk, connection),
                    )
                )
            with transaction.atomic():
                _one_writer(Architect(pk=architect_id))
                NoteKeyword.objects.filter(note__in=[n.pk for n in chunk]).delete()
                with connection.cursor() as cursor:
                    cursor.executemany(update, rows)
                NoteKeyword.objects.bulk_create(postings, batch_size=REINDEX_BATCH)
    recount(architect_id)
    return len(notes)


def recount(architect_id: int) -> None:
    """Set the architect's index statistics (``Architect.notes_*``) from its notes. The note's
    transaction keeps them by increments; this is the exact count, for a rebuilt index and for
    notes written around ``note_create`` (imports in bulk)."""
    stats = Note.objects.filter(architect_id=architect_id).aggregate(
        n=Count("pk"), length=Sum("length"), near=Sum("near_length")
    )
    Architect.objects.filter(pk=architect_id).update(
        notes_count=stats["n"] or 0,
        notes_length=stats["length"] or 0,
        notes_near_length=stats["near"] or 0,
    )


def conversations(notes: Sequence[Any]) -> list[list[Any]]:
    """Notes ordered by sender and time, cut into conversations by ``_goes_on``."""
    found: list[list[Any]] = []
    for note in notes:
        if not found or not _goes_on(found[-1][-1], note):
            found.append([])
        found[-1].append(note)
    return found


Place = tuple[Any, int, date | None]  # a note's conversation, its position there, its day
K = TypeVar("K")


def lift(
    scores: dict[Any, float],
    places: dict[Any, Place],
    periods: Sequence[tuple[date, date]] = (),
) -> dict[Any, float]:
    """The ranking's two lifts, one rule for level 1, level 4 and the bench. First, when the
    question names days or months (``language.periods``), a note told within one of them gains
    ``RANK_WHEN_WEIGHT``. Then each note gains a share of what its conversation around it
    scored: ``RANK_NEIGHBOURHOOD_WEIGHT`` times the mean score of the ``RANK_NEIGHBOURHOOD_NOTES``
    notes on each side (those not ranked count 0) — a question is usually answered where the
    talk was about it, so a hit among matching neighbours outranks an equal hit alone. Scores
    should be on one scale (0…1 at the best); notes without a place are left as they are."""
    width, weight = settings.RANK_NEIGHBOURHOOD_NOTES, settings.RANK_NEIGHBOURHOOD_WEIGHT
    told = dict(scores)
    if periods and settings.RANK_WHEN_WEIGHT:
        for key in told:
            day = places[key][2] if key in places else None
            if day is not None and any(first <= day <= last for first, last in periods):
                told[key] += settings.RANK_WHEN_WEIGHT
    if width <= 0 or weight <= 0:
        return told
    by_talk: dict[Any, dict[int, float]] = {}
    for key, score in told.items():
        place = places.get(key)
        if place is not None and place[0] is not None:
            row = by_talk.setdefault(place[0], {})
            row[place[1]] = row.get(place[1], 0.0) + score
    lifted = {}
    for key, score in told.items():
        place = places.get(key)
        if place is None or place[0] is None:
            lifted[key] = score
            continue
        row, at = by_talk[place[0]], place[1]
        around = sum(row.get(at + d, 0.0) + row.get(at - d, 0.0) for d in range(1, width + 1))
        lifted[key] = score + weight * around / (2 * width)
    return lifted


def lift_notes(scores: dict[K, float], notes: Mapping[K, Note], question: str) -> dict[K, float]:
    """``lift`` over the memory's notes: each found where it was told (its conversation, its
    position there, its day), the periods read from the question. Level 1 and level 4 rank by it."""
    return lift(scores, places_of(notes), language.periods(question))


def holders_first(order: Sequence[K], own: Mapping[K, float], places: Mapping[K, Place]) -> list[K]:
    """A neighbour never outranks the note that holds the words (PASSPORT.md «Поиск»). The lifts
    (context vectors, the neighbourhood, BM25's near terms) raise a note for what the notes told
    around it say; when such a note stands above a neighbour (same conversation, within
    ``RANK_NEIGHBOURHOOD_NOTES``) whose own evidence (``own``: its own words and meaning) is
    stronger, that neighbour moves to just above it. Everything else keeps its order."""
    width = max(settings.RANK_NEIGHBOURHOOD_NOTES, settings.NOTES_CONTEXT_NEIGHBOURS)
    ranked = list(order)
    close = _neighbours(ranked, places, width)
    if not close:
        return ranked
    moved = True
    while moved:  # each move puts a stronger holder above a weaker neighbour: it ends
        moved = False
        at = {key: i for i, key in enumerate(ranked)}
        for j in range(1, len(ranked)):
            mine = own.get(ranked[j], 0.0)
            above = min(
                (at[n] for n in close.get(ranked[j], ()) if at[n] < j and own.get(n, 0.0) < mine),
                default=None,
            )  # the first note above this one that is its weaker neighbour
            if above is not None:
                ranked.insert(above, ranked.pop(j))
                moved = True
                break
    return ranked


def _neighbours(keys: Sequence[K], places: Mapping[K, Place], width: int) -> dict[K, list[K]]:
    """Each key's neighbours among ``keys``: told in the same conversation, at most ``width``
    positions apart. Found once per ranking by sorting each conversation's keys by position, so
    a list of n candidates costs n·width steps, not n² comparisons per pass."""
    talks: dict[Any, list[tuple[int, K]]] = defaultdict(list)
    for key in keys:
        place = places.get(key)
        if place is not None and place[0] is not None:
            talks[place[0]].append((place[1], key))
    close: dict[K, list[K]] = {}
    for told in talks.values():
        told.sort(key=lambda item: item[0])
        for a, (position, key) in enumerate(told):
            for b in range(a + 1, len(told)):
                if told[b][0] - position > width:
                    break
                close.setdefault(key, []).append(told[b][1])
                close.setdefault(told[b][1], []).append(key)
    return close


def places_of(notes: Mapping[K, Note]) -> dict[K, Place]:
    """Where each note was told: its conversation, its position there, its day."""
    return {
        key: (note.talk, note.position, timezone.localtime(note.created_at).date())
        for key, note in notes.items()
    }
