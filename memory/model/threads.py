"""Threads: the memory's record of the model conversations it started (PASSPORT.md §12)."""

from __future__ import annotations

from django.utils import timezone

from memory.model.base import ModelBackend, ModelResult, ThreadNotFound
from memory.models import Architect, Thread
from memory.shadowing import in_shadow


def thread_check(*, architect: Architect, thread: str, backend: ModelBackend) -> Thread:
    """A thread continues only for its own architect, on its backend, in its working folder."""
    known = Thread.objects.filter(pk=thread, architect=architect).first()
    if known is None:
        raise ThreadNotFound(
            f"no thread {thread!r} for this architect: give a thread from one of its earlier answers",
            details={"thread": thread},
        )
    if known.backend != backend.name or known.workdir != backend.workdir:
        raise ThreadNotFound(
            f"thread {thread!r} belongs to {known.backend} in {known.workdir or '(no folder)'}; "
            f"the model now runs as {backend.name} in {backend.workdir or '(no folder)'}",
            details={"thread": thread},
        )
    return known


def thread_record(
    *, architect: Architect, backend: ModelBackend, result: ModelResult
) -> Thread | None:
    """Record a conversation as the architect's (a later request may continue it). A shadow
    run's conversation is never recorded: nobody may continue into a candidate's answer."""

    if in_shadow():
        return None
    thread, created = Thread.objects.get_or_create(
        pk=result.thread,
        defaults={"architect": architect, "backend": backend.name, "workdir": backend.workdir},
    )
    if thread.architect_id != architect.pk:
        raise ThreadNotFound(f"thread {result.thread!r} belongs to another architect")
    thread.turns += result.turns
    thread.last_used_at = timezone.now()
    thread.save(update_fields=["turns", "last_used_at"])
    return thread
