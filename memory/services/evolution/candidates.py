"""Candidates of a skill: written beside the active version, killed by staff, and decided by the
verdicts — promoted or deleted, each one commit of the skills repository. A verdict on a real run
re-decides its candidates on Celery after the verdict commits (``decide_after_verdict``), never
inside the request that gave it."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from memory.agent import skills_repo
from memory.celery import enqueue
from memory.models import Run, SkillCandidate
from memory.services.evolution.measure import figures, verdict_of

log = logging.getLogger(__name__)

EVALUATE_TASK = "memory.skills_evaluate"


def open_candidate(skill: str) -> SkillCandidate | None:
    return SkillCandidate.objects.filter(skill=skill, status="open").first()


def write_candidate(
    skill: str, *, body: str, description: str = "", reason: str, author: str
) -> SkillCandidate:
    """Write a candidate beside the active version (one commit) and start measuring it. A text
    written over an open candidate replaces it: its cases measured the old text."""
    active = skills_repo.active().get(skill)
    written, sha = skills_repo.write_candidate(
        skill, body=body, description=description, reason=reason, author=author
    )
    text = skills_repo.text_of(written)
    with transaction.atomic():
        SkillCandidate.objects.filter(skill=skill, status="open").update(
            status="replaced",
            decided_why=f"a new text was written over it: {reason.strip()}",
            decided_commit=sha,
            decided_at=timezone.now(),
        )
        return SkillCandidate.objects.create(
            skill=skill,
            version=skills_repo.version(text),
            active_version=skills_repo.version(skills_repo.text_of(active)) if active else "",
            opened_by=author,
            opened_why=reason.strip(),
            opened_commit=sha,
        )


def kill(skill: str, *, reason: str, author: str) -> SkillCandidate | None:
    """Staff end a candidate: the file is deleted (one commit), the record stays with why."""
    candidate = open_candidate(skill)
    sha = skills_repo.remove_candidate(skill, reason=f"killed by {author}: {reason}", author=author)
    if candidate is None:
        return None
    _decide(candidate, "killed", f"killed by {author}: {reason}", sha or "", figures(candidate))
    return candidate


def _decide(
    candidate: SkillCandidate, status: str, why: str, sha: str, numbers: dict[str, Any]
) -> None:
    candidate.status = status
    candidate.decided_why = why
    candidate.decided_commit = sha
    candidate.figures = numbers
    candidate.decided_at = timezone.now()
    candidate.save(
        update_fields=["status", "decided_why", "decided_commit", "figures", "decided_at"]
    )


def evaluate(candidate: SkillCandidate) -> str:
    """Promote, delete or keep measuring. Returns the candidate's status after."""
    candidate.refresh_from_db()
    if candidate.status != "open":
        return candidate.status
    numbers = figures(candidate)
    won, why = verdict_of(numbers)
    if won:
        sha = skills_repo.promote(candidate.skill, reason=why, author="memory")
        _decide(candidate, "promoted", why, sha, numbers)
    elif numbers["cases"] - numbers["failed"] >= settings.CANDIDATE_MAX_CASES:
        why = f"after {numbers['cases']} shadow cases: {why}"
        sha = skills_repo.remove_candidate(candidate.skill, reason=why, author="memory")
        _decide(candidate, "deleted", why, sha or "", numbers)
    return candidate.status


def verdict_given(run: Run) -> None:
    """A verdict landed on a run: the candidates that replayed it are evaluated again, by a job
    sent once the verdict commits (a promotion is a git commit: never inside the request)."""
    if SkillCandidate.objects.filter(status="open", cases__run=run).exists():
        enqueue(EVALUATE_TASK, str(run.pk))


def evaluate_after_verdict(run_id: str) -> list[str]:
    """The job behind ``verdict_given``: each open candidate that replayed the run, decided
    again. Returns their statuses after."""
    run = Run.objects.filter(pk=run_id).first()
    if run is None:
        return []
    statuses = []
    try:
        for candidate in SkillCandidate.objects.filter(status="open", cases__run=run).distinct():
            statuses.append(evaluate(candidate))
    except Exception:
        log.exception("evolution: evaluating after the verdict on run %s failed", run.pk)
    return statuses
