"""Level 5's job: its life from start to close. A recall at ``extreme`` whose levels 1–4 found
nothing starts one (``start``): a ``Research`` row named by the recall's run, sent to Celery once
the row commits. The job (``conduct``, idempotent by that run id) runs the investigation
(``steps``), closes done with its answer (and what the relearning cycle kept) or failed with the
reason, and counts its model calls on the recall's run."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from memory.celery import enqueue
from memory.levels.context import RecallContext
from memory.levels.research import SKILL
from memory.model.base import ModelResult
from memory.models import Research, Run
from memory.services import relearning
from memory.services.evolution import measure, share
from memory.services.research.steps import Found, Progress, count, investigate

log = logging.getLogger(__name__)

TASK = "memory.research"


def start(ctx: RecallContext, levels: list[int]) -> Research:
    """Open the job for this recall (idempotent by its run) and send it once the row commits."""
    assert ctx.run is not None
    research, created = Research.objects.get_or_create(
        run=ctx.run,
        defaults={
            "architect": ctx.architect,
            "question": ctx.text,
            "scope": ctx.scope,
            "lang": ctx.lang,
            "progress": {"levels": levels, "steps": [], "model_turns": 0, "seconds": 0.0},
        },
    )
    if created:
        run_id = str(ctx.run.pk)
        enqueue(TASK, run_id, failed=lambda error: _not_sent(run_id, error))
    return research


def _not_sent(run_id: str, error: BaseException) -> None:
    Research.objects.filter(pk=run_id, status="queued").update(
        status="failed", error=f"broker: {error}"[:4000], finished_at=timezone.now()
    )


def claim(run_id: str) -> Research | None:
    """Take the job; None when it is done, failed, or unknown (a redelivery after it finished)."""
    with transaction.atomic():
        research = Research.objects.select_for_update().filter(pk=run_id).first()
        if research is None or research.status in ("done", "failed"):
            return None
        research.status = "running"
        research.attempts += 1
        research.started_at = research.started_at or timezone.now()
        research.save(update_fields=["status", "attempts", "started_at"])
    return research


def conduct(run_id: str, *, out_of_time: Callable[[], bool] | None = None) -> Research | None:
    """Run the job to its end and close it: done with its answer (and what the relearning cycle
    kept), or failed with the reason. Safe to call again for the same run. Out of time (the soft
    limit, by Celery's signal or by this process's own clock) it closes with what was found."""
    research = claim(run_id)
    if research is None:
        return Research.objects.filter(pk=run_id).first()
    if out_of_time is None:
        deadline = time.monotonic() + settings.RESEARCH_SOFT_SECONDS
        out_of_time = lambda: time.monotonic() > deadline  # noqa: E731
    progress = Progress(research)
    try:
        found = investigate(research, progress, out_of_time)
    except Exception as error:
        log.exception("research %s failed", run_id)
        progress.save()
        _on_run(research, progress)
        Research.objects.filter(pk=run_id).update(
            status="failed",
            error=f"{getattr(error, 'code', type(error).__name__)}: {error}"[:4000],
            finished_at=timezone.now(),
        )
        return Research.objects.get(pk=run_id)
    research.answer = found.answer_body()
    research.kind = "probabilistic"
    research.progress = progress.data
    kept = None  # the relearning cycle's result, when the cycle's own model wrote the summary
    if found.basis:
        research.relearned, kept = _relearn(research, found, progress)
        research.answer["relearned"] = research.relearned
    research.status = "done"
    research.finished_at = timezone.now()
    progress.save()
    research.save()
    _on_run(research, progress)
    if progress.data["model_turns"]:  # the model worked by the skill: a candidate may replay it
        share.offer(
            Run.objects.get(pk=research.pk),
            request={"text": research.question, "scope": research.scope, "lang": research.lang},
            answer=lambda: measure.brief(
                found=found.found, ids=[b["note"] for b in found.basis], text=found.text
            ),
            skills=[SKILL],
            call=share.RESEARCH,
        )
    if kept is not None:  # as after a level 2, 3 or 4 answer: that summary's call is replayable
        relearning.offer(Run.objects.get(pk=research.pk), kept, lang=research.lang)
    return research


def _on_run(research: Research, progress: Progress) -> None:
    """The job's model calls are counted on the recall's run (closed before the job began), and
    the conversation the conclusion came from is named there (a denial may name it)."""
    used = progress.data.get("usage", [])
    changes: dict[str, Any] = {
        "model_turns": F("model_turns") + sum(u.get("turns", 0) for u in used),
        "tokens_in": F("tokens_in") + sum(u.get("tokens_in", 0) for u in used),
        "tokens_out": F("tokens_out") + sum(u.get("tokens_out", 0) for u in used),
        "model_seconds": F("model_seconds") + sum(u.get("seconds", 0.0) for u in used),
    }
    if progress.data.get("thread"):
        changes["thread"] = progress.data["thread"]
    Run.objects.filter(pk=research.pk).update(**changes)


def investigate_again(run: Run, request: dict[str, Any]) -> tuple[Found, list[ModelResult]]:
    """Steps 1–6 once more, for a shadow run (memory.services.evolution): no job row is written,
    nothing is relearned; the model's calls are returned to be counted on the shadow run."""
    research = Research(
        run=run,
        architect=run.architect,
        question=request["text"],
        scope=request.get("scope", []),
        lang=request.get("lang", settings.MEMORY_LANG),
        progress={"levels": [], "steps": [], "model_turns": 0, "seconds": 0.0},
    )
    progress = Progress(research)  # its saves update no row: there is none for a shadow
    deadline = time.monotonic() + settings.RESEARCH_SOFT_SECONDS
    found = investigate(research, progress, lambda: time.monotonic() > deadline)
    usages = [
        ModelResult(
            text="",
            thread="",
            turns=u.get("turns", 0),
            tokens_in=u.get("tokens_in", 0),
            tokens_out=u.get("tokens_out", 0),
            seconds=u.get("seconds", 0.0),
        )
        for u in progress.data.get("usage", [])
    ]
    return found, usages


def _relearn(
    research: Research, found: Found, progress: Progress
) -> tuple[dict[str, Any], relearning.Result | None]:
    """The relearning cycle at level 5; a model turn it takes (the summary) is the job's. With
    what was kept: the result, when the cycle's model wrote its summary — a summary the
    research's model wrote is that call's answer, replayed as the research (deep-analysis)."""
    used: list[Any] = []
    own = bool(found.summary.strip())
    result = relearning.Result(
        question=research.question,
        level=5,
        kind="probabilistic",
        text=found.text,
        facts=found.basis,
        scope=research.scope,
        summary=found.summary,
    )
    try:
        kept = relearning.relearn(
            result,
            architect=research.architect,
            run=research.run,
            lang=research.lang,
            usages=used,
        )
    except Exception as error:
        log.exception("research %s: the relearning cycle failed", research.pk)
        return relearning.failed(error), None
    finally:
        for usage in used:
            count(progress, usage)
    return kept, result if not own and kept.get("written_by") == "model" else None


def state(research: Research) -> dict[str, Any]:
    """The job as an answer shows it: its run, status and progress (and error when it failed)."""
    out: dict[str, Any] = {
        "run": str(research.pk),
        "status": research.status,
        "progress": research.progress,
    }
    if research.error:
        out["error"] = research.error
    return out
