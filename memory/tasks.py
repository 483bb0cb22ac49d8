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


@shared_task(name="memory.outbox_replay", bind=True, acks_late=True)
def outbox_replay(self) -> dict:  # type: ignore[no-untyped-def]
    """Deliver what is due in the outbox; come back when something is still queued.

    With the embedded stores a worker does not own them, so the replay asks the owner (the web
    process) through the internal door; with server engines it delivers directly.
    """
    from django.utils import timezone

    from memory.errors import MemoryServiceError
    from memory.models import OutboxItem
    from memory.stores import outbox

    try:
        result = outbox.drain()
    except MemoryServiceError as error:
        if not error.retryable:
            raise
        raise self.retry(countdown=30, max_retries=None) from error
    due = OutboxItem.objects.filter(status="queued").order_by("next_attempt_at").first()
    if due is not None:
        delay = max(1.0, (due.next_attempt_at - timezone.now()).total_seconds())
        outbox_replay.apply_async(countdown=delay)
    return result.as_dict()
