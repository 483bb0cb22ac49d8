"""Celery tasks take ids and call services; they are idempotent, so a retry is always safe."""

from __future__ import annotations

from celery import shared_task
from django.db import transaction

from memory import language
from memory.models import Note, NoteKeyword


@shared_task(name="memory.notes_reindex", acks_late=True)
def notes_reindex(architect_id: int) -> int:
    """Rebuild the lemmas of one architect's notes (after the morphology changes). Returns the count."""
    count = 0
    for note in Note.objects.filter(architect_id=architect_id).iterator():
        with transaction.atomic():
            NoteKeyword.objects.filter(note=note).delete()
            NoteKeyword.objects.bulk_create(
                [
                    NoteKeyword(architect_id=architect_id, note=note, lemma=lemma)
                    for lemma in language.keywords(note.text)
                ]
            )
        count += 1
    return count
