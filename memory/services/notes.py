"""Verbatim notes: written first on every remember, found by lemmas at level 1."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import Count

from memory import language
from memory.models import Architect, Note, NoteKeyword, Run


def note_create(
    *,
    architect: Architect,
    text: str,
    scope: Sequence[dict[str, Any]],
    sender: str,
    run: Run | None,
    lemmas: Sequence[str] | None = None,
    entities: dict[str, Any] | None = None,
) -> Note:
    """The note and its lemmas. Callers inside a transaction pass ``lemmas`` (and ``entities``)
    computed beforehand, so the write lock is held for the inserts only, never for morphology."""
    if lemmas is None:
        lemmas = language.keywords(text)
    note = Note.objects.create(
        architect=architect,
        text=text,
        scope=list(scope),
        sender=sender,
        run=run,
        entities=entities or {},
    )
    NoteKeyword.objects.bulk_create(
        [NoteKeyword(architect=architect, note=note, lemma=lemma) for lemma in lemmas]
    )
    return note


@dataclass
class NoteHit:
    note: Note
    matched: list[str]
    coverage: float


def notes_search(
    *, architect: Architect, keywords: Sequence[str], limit: int = 20
) -> list[NoteHit]:
    """Notes sharing lemmas with the question, most shared first, then newest.

    ``coverage`` is the share of the question's lemmas a note contains.
    """
    if not keywords:
        return []
    ranked = list(
        NoteKeyword.objects.filter(architect=architect, lemma__in=list(keywords))
        .values("note_id")
        .annotate(shared=Count("lemma"))
        .order_by("-shared")[: limit * 5]
    )
    if not ranked:
        return []
    notes = {
        n.pk: n
        for n in Note.objects.filter(architect=architect, pk__in=[r["note_id"] for r in ranked])
    }
    matched: dict[Any, list[str]] = {}
    for row in NoteKeyword.objects.filter(note_id__in=list(notes), lemma__in=list(keywords)).values(
        "note_id", "lemma"
    ):
        matched.setdefault(row["note_id"], []).append(row["lemma"])
    hits = [
        NoteHit(
            note=notes[pk],
            matched=[k for k in keywords if k in matched.get(pk, [])],
            coverage=len(set(matched.get(pk, []))) / len(set(keywords)),
        )
        for pk in notes
    ]
    hits.sort(key=lambda h: (-h.coverage, -h.note.created_at.timestamp()))
    return hits[:limit]
