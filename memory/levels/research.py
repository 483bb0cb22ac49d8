"""Level 5: research (the job is ``memory.services.research``, its starter passed in). The recall starts the job — or finds the
one an earlier recall of the caller started (named in ``previous_results``) — and answers at
once with its run and progress; asked to ``wait``, it holds the answer until the job ends or the
bound (settings.RESEARCH_WAIT_SECONDS) passes."""

from __future__ import annotations

import time
from collections.abc import Callable

from django.conf import settings

from memory import model
from memory.i18n import Text
from memory.ladder import Outcome, ReportEntry
from memory.levels.context import RecallContext
from memory.models import Research

POLL_SECONDS = 0.25
SKILL = "deep-analysis"  # the skill the research job follows

# Opens (or finds) the research job of this recall and sends it once its row commits.
StartResearch = Callable[[RecallContext, list[int]], Research]

_RUNNING = Text(
    ru="исследование идёт (прогон {run}): ответ — в следующем recall с previous_results: [«{run}»]",
    en="research is running (run {run}): the answer comes with a later recall whose "
    "previous_results names «{run}»",
)
_DONE = Text(ru="исследование завершено (прогон {run})", en="research finished (run {run})")
_FAILED = Text(ru="исследование не удалось: {error}", en="research failed: {error}")
_STORE_FAILED = Text(
    ru="хранилище «{store}» не ответило исследованию, оно шло без него: {error}",
    en="the {store} store failed the research, which went on without it: {error}",
)


def search(ctx: RecallContext, start: StartResearch) -> Outcome:
    research = ctx.research_named
    if research is None:
        levels = [1, 2, 3, 4] if model.configured() else [1, 3, 4]
        research = start(ctx, levels)
    if ctx.wait:
        deadline = time.monotonic() + settings.RESEARCH_WAIT_SECONDS
        while research.status in ("queued", "running") and time.monotonic() < deadline:
            time.sleep(POLL_SECONDS)
            research = Research.objects.get(pk=research.pk)
    # Read it again: a job run in this process (Celery's eager mode) has already ended.
    research = Research.objects.get(pk=research.pk)
    ctx.research = research
    return outcome(research, ctx.lang)


def outcome(research: Research, lang: str) -> Outcome:
    """What a job in its present state says as level 5's outcome."""
    run = research.pk
    skills = [SKILL]
    if research.status == "done":
        answer = research.answer
        found = bool(answer.get("found"))
        entry = ReportEntry(
            5,
            "research",
            SKILL,
            "answered" if found else "empty",
            returned=len((answer.get("data") or {}).get("notes", [])),
            kind=research.kind or "probabilistic" if found else None,
            note=_DONE(lang, run=run) + ("" if found else f": {answer.get('text', '')}"),
        )
        return Outcome(
            found=found,
            kind=research.kind or "probabilistic",
            form="text",
            text=answer.get("text", ""),
            data=answer.get("data"),
            report=[entry, *_failed_stores(research, lang)],
            trace=[{"level": 5, "event": "research", "status": "done", "run": str(run)}],
            skills=skills,
            thread=str(research.progress.get("thread") or ""),
        )
    if research.status == "failed":
        note = _FAILED(lang, error=research.error)
        entry = ReportEntry(5, "research", SKILL, "failed", note=note)
    else:
        entry = ReportEntry(5, "research", SKILL, "running", note=_RUNNING(lang, run=run))
    return Outcome(
        found=False,
        report=[entry, *_failed_stores(research, lang)],
        trace=[{"level": 5, "event": "research", "status": research.status, "run": str(run)}],
        skills=skills,
    )


def _failed_stores(research: Research, lang: str) -> list[ReportEntry]:
    """A store that failed during the job (it went on without it) is a failed entry of its own:
    an outage is said, never read as "nothing there"."""
    return [
        ReportEntry(5, "research", f["store"], "failed", note=_STORE_FAILED(lang, **f))
        for f in (research.progress or {}).get("failed", [])
    ]
