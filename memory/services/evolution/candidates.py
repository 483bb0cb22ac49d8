"""Candidates of a skill: written beside the active version, killed by staff, and decided by the
verdicts — promoted or deleted, each one commit of the skills repository. A verdict on a real run
re-decides its candidates on Celery after the verdict commits (``evaluate_after_verdict``), never
inside the request that gave it. A candidate the memory's evolution run wrote gives that run its
verdict when it is decided, by the same path (``_judge_writer``): that is the verdict
evolve-skill's own candidates are measured on."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from memory.agent import skills_repo
from memory.celery import enqueue
from memory.models import Run, SkillCandidate
from memory.services.evolution.measure import figures, verdict_of, writer_verdict
from memory.services.runs import verdict_record

log = logging.getLogger(__name__)

EVALUATE_TASK = "memory.skills_evaluate"
PATTERN_TASK = "memory.skills_pattern"


def open_candidate(skill: str) -> SkillCandidate | None:
    return SkillCandidate.objects.filter(skill=skill, status="open").first()


def write_candidate(
    skill: str,
    *,
    body: str,
    description: str = "",
    reason: str,
    author: str,
    writer: Run | None = None,
) -> SkillCandidate:
    """Write a candidate beside the active version (one commit) and start measuring it. A text
    written over an open candidate replaces it: its cases measured the old text. ``writer``: the
    evolution run whose model wrote it, which its fate will judge."""
    written, sha = skills_repo.write_candidate(
        skill, body=body, description=description, reason=reason, author=author
    )
    return _opened(skill, written, sha, reason=reason, author=author, writer=writer)


def propose_skill(
    label: str,
    *,
    beside: str,
    description: str,
    body: str,
    reason: str,
    author: str,
    writer: Run | None = None,
) -> SkillCandidate:
    """A new skill, proposed as a candidate (one commit): measured in the calls of the skill it
    goes beside, promoted or deleted by the same rule as any candidate (``evaluate``)."""
    written, sha = skills_repo.write_new_skill(
        label, beside=beside, description=description, body=body, reason=reason, author=author
    )
    return _opened(written.name, written, sha, reason=reason, author=author, writer=writer)


def propose_instruction(
    lines: str, *, reason: str, author: str, writer: Run | None = None
) -> SkillCandidate:
    """New instruction lines, proposed as a candidate of the instruction (one commit): every
    call reads the instruction, so every call's replay measures it; the same rule decides."""
    written, sha = skills_repo.write_instruction_candidate(lines, reason=reason, author=author)
    return _opened(
        skills_repo.INSTRUCTION_NAME, written, sha, reason=reason, author=author, writer=writer
    )


def from_pattern(skill: str, lesson: str, *, run_id: str) -> SkillCandidate | None:
    """A pattern the model worked out in a relearning cycle (the owner's passport §14.4: a
    pattern not measured is a habit, not knowledge) becomes a candidate of the skill it
    concerns: the active text with the lesson added, measured in the shadow like any other.
    None when it names no skill of the memory (it is logged), or when the skill already has a
    candidate being measured: a pattern never throws away another's cases."""
    lesson = " ".join(str(lesson or "").split())
    active = skills_repo.active().get(skill)
    if active is None or not lesson:
        log.info("evolution: the pattern of run %s names no skill (%r): %s", run_id, skill, lesson)
        return None
    if open_candidate(skill) is not None:
        log.info("evolution: %s is being measured; the pattern of run %s waits", skill, run_id)
        return None
    if lesson in active.body:
        return None
    return write_candidate(
        skill,
        body=f"{active.body}\n\n{lesson}",
        reason=f"a pattern of the relearning cycle of run {run_id}: {lesson}",
        author="model",
    )


def _opened(
    skill: str, written: Any, sha: str, *, reason: str, author: str, writer: Run | None = None
) -> SkillCandidate:
    active = skills_repo.active().get(skill)
    text = skills_repo.text_of(written)
    measured_against = skills_repo.text_of(active) if active else ""
    if skill == skills_repo.INSTRUCTION_NAME:
        measured_against = skills_repo.instruction_path().read_text(encoding="utf-8")
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
            active_version=skills_repo.version(measured_against) if measured_against else "",
            opened_by=author,
            opened_why=reason.strip(),
            opened_commit=sha,
            writer=writer,
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
    _judge_writer(candidate)


def _judge_writer(candidate: SkillCandidate) -> None:
    """A decided candidate that the memory's evolution run wrote gives that run its verdict
    (``measure.writer_verdict``), written where every verdict is (``runs.verdict_record``) and
    read as every verdict is (``verdict_given``): the candidates of evolve-skill that replayed
    the run are decided again once it commits — by ``evaluate``, the one rule."""
    writer = candidate.writer
    if writer is None:
        return
    judged = writer_verdict(writer.candidates_written.exclude(status="open"))
    if judged is None or judged == (writer.verdict, writer.verdict_note):
        return
    value, note = judged
    verdict_record(writer, value=value, note=note)
    verdict_given(writer)


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
