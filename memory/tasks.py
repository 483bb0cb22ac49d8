"""Celery tasks take ids and call services; they are idempotent, so a retry is always safe."""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task
from celery.signals import worker_shutting_down
from django.conf import settings
from django.utils import timezone

from memory.errors import MemoryServiceError
from memory.knowledge import notes
from memory.models import OutboxItem
from memory.services import runs
from memory.services.evolution import candidates, shadow, share
from memory.services.idempotency import forget_expired
from memory.services.research import job as research
from memory.stores import outbox

log = logging.getLogger(__name__)


@shared_task(name="memory.notes_reindex", acks_late=True)
def notes_reindex(architect_id: int) -> int:
    """Rebuild one architect's full-text index (after the morphology or the context settings
    change). Returns the number of notes."""
    return notes.reindex(architect_id)


@shared_task(name=outbox.REPLAY_TASK, bind=True, acks_late=True)
def outbox_replay(self) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Deliver what is due in the outbox; come back when something is still queued.

    With the embedded stores a worker does not own them, so the replay asks their holder (the web
    process) through the internal door; with server engines it delivers directly.
    """
    try:
        result = outbox.drain()
    except MemoryServiceError as error:
        # The holder is unreachable (restarting, say): try again later, never give up.
        raise self.retry(countdown=30, max_retries=None) from error
    due = OutboxItem.objects.filter(status="queued").order_by("next_attempt_at").first()
    if due is not None:
        delay = max(0.0, (due.next_attempt_at - timezone.now()).total_seconds())
        outbox.hand_over(delay)
    return result.as_dict()


@worker_shutting_down.connect
def _end_rounds(**_: Any) -> None:
    """The worker is asked to stop: the outbox's rounds in flight in it (server engines: it
    delivers itself) end at their next batch, so the warm shutdown does not wait for a backlog."""
    outbox.stop_rounds()


@shared_task(name="memory.sweep", acks_late=True)
def sweep() -> dict[str, Any]:
    """The periodic sweep (Celery beat): replay due outbox items — including those left queued by
    a restart —, close runs whose process is gone, forget expired idempotency keys."""
    report: dict[str, Any] = {
        "closed_runs": runs.close_orphans(),
        "forgotten_keys": forget_expired(),
    }
    try:
        report["outbox"] = outbox.drain().as_dict()
    except MemoryServiceError as error:
        log.warning("sweep: the outbox could not be drained now: %s", error.message)
        report["outbox"] = {"error": error.message}
    return report


@shared_task(
    name=research.TASK,
    acks_late=True,
    time_limit=settings.RESEARCH_HARD_SECONDS,
    soft_time_limit=settings.RESEARCH_SOFT_SECONDS,
)
def research_run(run_id: str) -> str:
    """Level 5 for the recall whose run is ``run_id``; idempotent by it (a redelivered or
    repeated task finds the job closed and leaves it). The soft limit closes the job with what
    was found; the hard one, later, is Celery's."""
    done = research.conduct(run_id)
    return done.status if done is not None else "unknown"


@shared_task(
    name=share.SHADOW_TASK,
    acks_late=True,
    time_limit=settings.RESEARCH_HARD_SECONDS,  # a replayed research takes as long as research
    soft_time_limit=settings.RESEARCH_SOFT_SECONDS,
)
def shadow_run(case_id: int) -> str:
    """Replay one real request with a candidate skill (PASSPORT.md «Эволюция навыков»); its
    answer is compared, never returned. Idempotent: a case already taken is left alone."""
    case = shadow.conduct(case_id)
    return case.status if case is not None else "missing"


@shared_task(name="memory.skills_watch", acks_late=True)
def skills_watch() -> dict[str, Any]:
    """The periodic watch (Celery beat): evaluate the open candidates, and open one for a skill
    that misses repeatedly (the model writes it when one is configured)."""
    return shadow.watch()


@shared_task(name=candidates.EVALUATE_TASK, acks_late=True)
def skills_evaluate(run_id: str) -> list[str]:
    """A verdict landed on run ``run_id``: decide again the candidates that replayed it (a
    promotion or a deletion is a commit of the skills repository, so it runs here, after the
    verdict's commit, never inside the request that gave it). Idempotent: a decided candidate
    is left alone."""
    return candidates.evaluate_after_verdict(run_id)


@shared_task(name=candidates.PATTERN_TASK, acks_late=True)
def skills_pattern(skill: str, lesson: str, run_id: str) -> str:
    """A pattern the model worked out in the relearning cycle of run ``run_id`` opens a candidate
    of the skill it concerns (a commit: here, after the answer, never inside its request).
    Returns the candidate's version, or "" when none was opened (and why is logged)."""
    candidate = candidates.from_pattern(skill, lesson, run_id=run_id)
    return candidate.version if candidate is not None else ""
