"""Which real runs a candidate is measured on: for each skill a run used that has an open
candidate, every 1/``SHADOW_RATE``-th such request, within the day's cap on model turns, becomes a
shadow case sent to Celery once it commits. The skills each replayable model call uses are
registered by those calls' own modules at start-up (``REPLAYABLE``, filled by
``memory.services.evolution.shadow``), so this module imports no verb. Beside a call's own
skills, two kinds of candidate are measured in it: a new skill the agent proposed, in the calls
of the skill it goes beside, and the instruction's candidate, in every call (every call reads
the instruction)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from memory.agent import skills_repo
from memory.celery import Failed, enqueue
from memory.celery import send as celery_send
from memory.models import Run, ShadowCase, SkillCandidate
from memory.models.runs import SHADOW
from memory.services.evolution.measure import due
from memory.services.runs import process_tag

log = logging.getLogger(__name__)

SHADOW_TASK = "memory.shadow_run"

# The replayable model calls, by name: remember's turn, recall's levels 1–4 (level 2's call),
# the research (level 5), the relearning cycle's summary, the model writing a candidate.
REMEMBER, RECALL, RESEARCH, RELEARNING, EVOLVE = (
    "remember",
    "recall",
    "research",
    "relearning",
    "evolve",
)
# call → the skills it reads.
REPLAYABLE: dict[str, tuple[str, ...]] = {}


def replayable(skill: str) -> bool:
    if skill == skills_repo.INSTRUCTION_NAME:
        return bool(REPLAYABLE)  # read by every call
    if any(skill in names for names in REPLAYABLE.values()):
        return True
    proposed = skills_repo.proposed().get(skill) or skills_repo.active().get(skill)
    return proposed is not None and bool(proposed.beside) and replayable(proposed.beside)


def _measured(call: str, skills: Iterable[str]) -> list[str]:
    """The names whose candidates this call measures: its own skills, a proposed skill that goes
    beside one of them, and the instruction."""
    own = [name for name in skills if name in REPLAYABLE.get(call, ())]
    others = []
    for name in SkillCandidate.objects.filter(status="open").values_list("skill", flat=True):
        if name in own:
            continue
        if name == skills_repo.INSTRUCTION_NAME:
            others.append(name)
            continue
        file = skills_repo.candidate(name)
        if file is not None and file.beside in own:
            others.append(name)
    return own + sorted(others)


def turns_today() -> int:
    """Model turns the evolution spent today (UTC day): closed shadow-channel runs as counted,
    shadow cases not yet closed at their estimate."""
    start = timezone.now().replace(hour=0, minute=0, second=0, microsecond=0)
    closed = sum(
        Run.objects.filter(channel=SHADOW, created_at__gte=start)
        .exclude(status="running")
        .values_list("model_turns", flat=True)
    )
    pending = sum(
        ShadowCase.objects.filter(
            created_at__gte=start, status__in=("queued", "running")
        ).values_list("estimate", flat=True)
    )
    return closed + pending


def offer(
    run: Run,
    *,
    request: dict[str, Any],
    answer: dict[str, Any] | Callable[[], dict[str, Any]],
    skills: Iterable[str] | None = None,
    call: str | None = None,
) -> list[ShadowCase]:
    """After a real run closed: for each skill its model call ``call`` (by default the run's
    verb) used that has an open candidate, count the request, and when it is one of the share
    and the day's cap allows, queue its shadow replay (sent on commit). Never raises: the
    answer is already given."""
    try:
        return _offer(run, request=request, answer=answer, skills=skills, call=call or run.verb)
    except Exception:
        log.exception("evolution: offering run %s to the shadow test failed", run.pk)
        return []


def _offer(
    run: Run,
    *,
    request: dict[str, Any],
    answer: dict[str, Any] | Callable[[], dict[str, Any]],
    skills: Iterable[str] | None,
    call: str,
) -> list[ShadowCase]:
    # A shadow-channel run is a replay, never replayed, save the model writing a candidate:
    # it answers nobody, and it is the call evolve-skill's candidates are measured on.
    if (run.channel == SHADOW and call != EVOLVE) or settings.SHADOW_RATE <= 0:
        return []
    if request.get("thread"):
        return []  # a request continuing a conversation cannot be replayed without joining it
    cases = []
    for name in _measured(call, skills if skills is not None else run.skills or []):
        with transaction.atomic():
            candidate = (
                SkillCandidate.objects.select_for_update().filter(skill=name, status="open").first()
            )
            if candidate is None or candidate.cases.filter(run=run).exists():
                continue  # one case a candidate a real run (a run may offer two calls)
            SkillCandidate.objects.filter(pk=candidate.pk).update(eligible=F("eligible") + 1)
            candidate.refresh_from_db(fields=["eligible"])
            if not due(candidate.eligible):
                continue
            if callable(answer):
                answer = answer()
            estimate = max(run.model_turns, 1)
            if turns_today() + estimate > settings.SHADOW_DAILY_TURNS:
                log.info(
                    "evolution: the day's %s shadow turns are spent", settings.SHADOW_DAILY_TURNS
                )
                continue
            shadow = Run.objects.create(
                architect_id=run.architect_id,
                verb=run.verb,
                text=run.text,
                caller=run.caller,
                channel=SHADOW,
                process=process_tag(),
                params={"scope": list(request.get("scope") or [])},
            )
            case = ShadowCase.objects.create(
                candidate=candidate,
                run=run,
                shadow=shadow,
                estimate=estimate,
                request={**request, "call": call},
                real_answer=answer,
            )
            enqueue(SHADOW_TASK, case.pk, failed=not_sent(case.pk))
            cases.append(case)
    return cases


def not_sent(case_id: int) -> Failed:
    """What a broker that is down leaves: the case fails with the reason, nobody's answer does."""

    def record(error: BaseException) -> None:
        ShadowCase.objects.filter(pk=case_id, status="queued").update(
            status="failed", error=f"not sent: {error}"[:4000], finished_at=timezone.now()
        )
        Run.objects.filter(shadow_case__pk=case_id, status="running").update(
            status="failed", error=f"not sent: {error}"[:4000]
        )

    return record


def send(case_id: int) -> None:
    """Send one shadow case to Celery now (``_offer`` does it once the case commits)."""
    celery_send(SHADOW_TASK, [case_id], failed=not_sent(case_id))
