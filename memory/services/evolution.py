"""Skills evolve (PASSPORT.md §17; the owner's passport §11, §14.4): only by measurement.

1. Misses are read from run facts: verdicts ``reject``, recalls that found nothing, runs that
   cost more model turns than the skill's median by a factor (``misses``).
2. A repeated miss opens a candidate beside the active version: written by the model through
   ``write_candidate`` (it can write only candidate files) when one is configured, or by staff.
3. A declared share of real requests that used the skill (``SHADOW_RATE``, exactly: every
   1/rate-th one), within a daily cap on model turns (``SHADOW_DAILY_TURNS``), is replayed with
   the candidate by Celery, off the answer path, on a run of the ``shadow`` channel. The shadow's
   answer is never returned nor kept: only whether it agrees with the answer the real run gave.
4. The verdict comes from outside, on the real run's answer, and tells for both sides: a shadow
   answer that agrees with a confirmed answer is confirmed, one that agrees with a rejected answer
   is rejected, and the opposite when it does not agree. Cases whose real run has no verdict are
   incomplete, never wins. With ``PROMOTE_MIN`` judged cases a candidate that wins on verdicts
   by ``PROMOTE_MARGIN`` and costs no more (turns, model seconds) is promoted; after
   ``CANDIDATE_MAX_CASES`` cases one that did not is deleted with the reason. Each is one commit.
"""

from __future__ import annotations

import json
import logging
import statistics
import time
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import timedelta
from fractions import Fraction
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from memory import language, model
from memory.agent import instruction, skills_repo
from memory.agent import tools as agent_tools
from memory.i18n import Text
from memory.model.base import ModelError, ModelResult, ToolScope
from memory.models import Architect, Run, ShadowCase, SkillCandidate, ToolCall
from memory.models.runs import EVOLVE, SHADOW
from memory.services.runs import process_tag, run_close

log = logging.getLogger(__name__)


def replays() -> dict[str, tuple[str, ...]]:
    """The skills a shadow run can replay, by the verb whose model part used them — read from
    the model calls themselves (remember's turn, level 2, level 5), never listed twice. The
    other skills (the graph's, the relearning cycle's, this one's) run in no replayable call."""
    from memory.levels import model as model_level
    from memory.services import remember, research

    return {
        "remember": tuple(remember.SKILLS),
        "recall": (*model_level.SKILLS, research.SKILL),
    }


EVOLVE_SKILL = "evolve-skill"

_shadow: ContextVar[bool] = ContextVar("memory_in_shadow", default=False)


def in_shadow() -> bool:
    """True inside a shadow replay: nothing it does may reach anyone (no thread is recorded)."""
    return _shadow.get()


@contextmanager
def _shadowing() -> Any:
    token = _shadow.set(True)
    try:
        yield
    finally:
        _shadow.reset(token)


def replayable(skill: str) -> bool:
    return any(skill in names for names in replays().values())


# --- answers in brief, and agreement ----------------------------------------------------------


def brief(*, found: bool, ids: Iterable[str] = (), text: str = "") -> dict[str, Any]:
    """What of an answer two versions are compared on: found or not, the ids it rests on, and
    its content terms (for an answer that names no ids: a model's text)."""
    return {
        "found": bool(found),
        "ids": sorted({str(i) for i in ids if i}),
        "terms": sorted(set(language.keywords(text or "")))[:200],
    }


def _jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    a, b = set(a), set(b)
    return len(a & b) / len(a | b) if a | b else 1.0


def agree(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Do two answers say the same? Both found nothing; or both found, resting on the same ids
    (Jaccard ≥ SHADOW_AGREE_MIN), or — when neither names ids — saying the same content terms."""
    if a.get("found") != b.get("found"):
        return False
    if not a.get("found"):
        return True
    floor = settings.SHADOW_AGREE_MIN
    if a.get("ids") or b.get("ids"):
        return _jaccard(a.get("ids", []), b.get("ids", [])) >= floor
    return _jaccard(a.get("terms", []), b.get("terms", [])) >= floor


def writes_of(run: Run) -> dict[str, Any]:
    """A remember's answer in brief: what its model wrote (or, in a shadow run, would have
    written) — each value as kind=value, whatever the wording of the basis."""
    ids: list[str] = []
    for call in ToolCall.objects.filter(run=run, error=""):
        args = call.arguments or {}
        kind = str(args.get("kind", "")).strip().lower()
        if call.tool in ("write_value", "make_new_kind"):
            ids.append(f"{kind}={str(args.get('value', '')).strip().lower()}")
        elif call.tool == "promote_to_list":
            ids += [
                f"{kind}[]={str(i.get('value', '')).strip().lower()}"
                for i in args.get("items", [])
                if isinstance(i, dict)
            ]
    return brief(found=bool(ids), ids=ids)


# --- misses ---------------------------------------------------------------------------------


@dataclass
class Misses:
    skill: str
    runs: int = 0
    rejected: list[str] = field(default_factory=list)  # run ids
    empty: list[str] = field(default_factory=list)
    costly: list[str] = field(default_factory=list)
    median_turns: float = 0.0
    since: str = ""

    @property
    def repeated(self) -> bool:
        least = settings.MISS_REPEAT
        return max(len(self.rejected), len(self.empty), len(self.costly)) >= least

    def reason(self) -> str:
        parts = []
        if len(self.rejected) >= settings.MISS_REPEAT:
            parts.append(f"{len(self.rejected)} of {self.runs} runs rejected")
        if len(self.empty) >= settings.MISS_REPEAT:
            parts.append(f"{len(self.empty)} of {self.runs} recalls found nothing")
        if len(self.costly) >= settings.MISS_REPEAT:
            parts.append(
                f"{len(self.costly)} of {self.runs} runs cost over "
                f"{settings.MISS_TURNS_FACTOR:g}× the median of {self.median_turns:g} turns"
            )
        return "; ".join(parts)


def misses(skill: str) -> Misses:
    """The skill's misses among the real runs of the last MISS_WINDOW_DAYS days that came after
    its last candidate was decided (a miss opens at most one candidate)."""
    since = timezone.now() - timedelta(days=settings.MISS_WINDOW_DAYS)
    last = (
        SkillCandidate.objects.filter(skill=skill)
        .exclude(status="open")
        .order_by("-decided_at")
        .values_list("decided_at", flat=True)
        .first()
    )
    if last is not None and last > since:
        since = last
    runs = [
        r
        for r in Run.objects.asked()
        .filter(created_at__gte=since, status="done")
        .only("id", "verb", "skills", "verdict", "found", "model_turns")
        if skill in (r.skills or [])
    ]
    found = Misses(skill=skill, runs=len(runs), since=since.isoformat())
    if not runs:
        return found
    found.median_turns = statistics.median(r.model_turns for r in runs)
    for r in runs:
        if r.verdict == "reject":
            found.rejected.append(str(r.pk))
        if r.verb == "recall" and r.found is False:
            found.empty.append(str(r.pk))
        if len(runs) >= settings.MISS_REPEAT and r.model_turns > (
            found.median_turns * settings.MISS_TURNS_FACTOR
        ):
            found.costly.append(str(r.pk))
    return found


# --- candidates -----------------------------------------------------------------------------


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


# --- the shadow share and the daily cap ---------------------------------------------------


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


def _due(eligible: int) -> bool:
    """Is the eligible-th request one of the declared share? Exact: floor(n·rate) steps."""
    rate = Fraction(str(settings.SHADOW_RATE))
    return (eligible * rate).__floor__() > ((eligible - 1) * rate).__floor__()


def offer(
    run: Run,
    *,
    request: dict[str, Any],
    answer: dict[str, Any] | Callable[[], dict[str, Any]],
    skills: Iterable[str] | None = None,
) -> list[ShadowCase]:
    """After a real run closed: for each skill it used that has an open candidate, count the
    request, and when it is one of the share and the day's cap allows, queue its shadow replay
    (sent on commit). Never raises: the answer is already given."""
    try:
        return _offer(run, request=request, answer=answer, skills=skills)
    except Exception:
        log.exception("evolution: offering run %s to the shadow test failed", run.pk)
        return []


def _offer(
    run: Run,
    *,
    request: dict[str, Any],
    answer: dict[str, Any] | Callable[[], dict[str, Any]],
    skills: Iterable[str] | None,
) -> list[ShadowCase]:
    if run.channel == SHADOW or settings.SHADOW_RATE <= 0 or request.get("thread"):
        return []  # a request continuing a conversation cannot be replayed without joining it
    cases = []
    for name in skills if skills is not None else run.skills or []:
        if name not in replays().get(run.verb, ()):
            continue
        with transaction.atomic():
            candidate = (
                SkillCandidate.objects.select_for_update().filter(skill=name, status="open").first()
            )
            if candidate is None:
                continue
            SkillCandidate.objects.filter(pk=candidate.pk).update(eligible=F("eligible") + 1)
            candidate.refresh_from_db(fields=["eligible"])
            if not _due(candidate.eligible):
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
                owner=process_tag(),
                params={"scope": list(request.get("scope") or [])},
            )
            case = ShadowCase.objects.create(
                candidate=candidate,
                run=run,
                shadow=shadow,
                estimate=estimate,
                request=request,
                real_answer=answer,
            )
            transaction.on_commit(lambda pk=case.pk: send(pk))
            cases.append(case)
    return cases


def send(case_id: int) -> None:
    from memory.tasks import shadow_run

    try:
        shadow_run.delay(case_id)
    except Exception as error:  # the broker is down: the case fails, nobody's answer does
        log.exception("evolution: shadow case %s could not be sent", case_id)
        ShadowCase.objects.filter(pk=case_id, status="queued").update(
            status="failed", error=f"not sent: {error}"[:4000], finished_at=timezone.now()
        )
        Run.objects.filter(shadow_case__pk=case_id, status="running").update(
            status="failed", error=f"not sent: {error}"[:4000]
        )


# --- the shadow run -----------------------------------------------------------------------


@dataclass
class Replayed:
    answer: dict[str, Any]
    usages: list[Any] = field(default_factory=list)
    found: bool | None = False
    tools: list[str] = field(default_factory=list)


def conduct(case_id: int) -> ShadowCase | None:
    """Replay one case with the candidate and record the facts on its shadow run. Idempotent: a
    case already taken is left alone."""
    taken = ShadowCase.objects.filter(pk=case_id, status="queued").update(status="running")
    if not taken:
        return ShadowCase.objects.filter(pk=case_id).first()
    case = ShadowCase.objects.select_related("candidate", "run", "shadow").get(pk=case_id)
    skill = case.candidate.skill
    current = skills_repo.candidate(skill)
    if (
        current is None
        or case.candidate.status != "open"
        or (skills_repo.version(skills_repo.text_of(current)) != case.candidate.version)
    ):
        return _fail(case, "the candidate was decided or rewritten before its replay")
    started = time.perf_counter()
    try:
        with instruction.trying({skill: current}), _shadowing():
            replayed = _REPLAY[case.run.verb](case, skill)
    except Exception as error:
        log.exception("evolution: shadow case %s failed", case_id)
        usage = getattr(error, "usage", None)
        run_close(
            case.shadow,
            usages=[usage] if usage is not None else [],
            error=f"{getattr(error, 'code', type(error).__name__)}: {error}",
            failed=True,
            skills=[skill],
            seconds=round(time.perf_counter() - started, 4),
        )
        return _fail(case, f"{getattr(error, 'code', type(error).__name__)}: {error}")
    run_close(
        case.shadow,
        usages=replayed.usages,
        found=replayed.found,
        skills=[skill],
        tools=sorted(set(replayed.tools)),
        depth_used=case.run.depth_used,
        seconds=round(time.perf_counter() - started, 4),
    )
    case.agrees = agree(case.real_answer, replayed.answer)
    _forget_answer(case)
    case.status = "done"
    case.finished_at = timezone.now()
    case.save(update_fields=["agrees", "status", "finished_at"])
    evaluate(case.candidate)
    return case


def _forget_answer(case: ShadowCase) -> None:
    """What the candidate's tools were given and gave back is its answer in the making (what it
    would have written): once compared, only the facts stay — which tools, how long, refused."""
    ToolCall.objects.filter(run=case.shadow_id).update(arguments={}, result=None)


def _fail(case: ShadowCase, why: str) -> ShadowCase:
    _forget_answer(case)
    case.status = "failed"
    case.error = why[:4000]
    case.finished_at = timezone.now()
    case.save(update_fields=["status", "error", "finished_at"])
    Run.objects.filter(pk=case.shadow_id, status="running").update(status="failed", error=why)
    return case


def _replay_remember(case: ShadowCase, skill: str) -> Replayed:
    from memory.services import remember as remember_service

    usage = remember_service.think_again(case.shadow, case.request)
    return Replayed(
        answer=writes_of(case.shadow),
        usages=[usage],
        found=None,  # a remember finds nothing; what it wrote is its answer
        tools=list(ToolCall.objects.filter(run=case.shadow).values_list("tool", flat=True)),
    )


def _replay_recall(case: ShadowCase, skill: str) -> Replayed:
    if skill == "deep-analysis":
        from memory.services import research

        found, usages = research.investigate_again(case.shadow, case.request)
        return Replayed(
            answer=brief(found=found.found, ids=[b["note"] for b in found.basis], text=found.text),
            usages=usages,
            found=found.found,
            tools=list(ToolCall.objects.filter(run=case.shadow).values_list("tool", flat=True)),
        )
    from memory.services import recall as recall_service

    final, usages, tools = recall_service.climb_again(case.shadow, case.request)
    return Replayed(
        answer=recall_service.answer_brief(final),
        usages=usages,
        found=final is not None,
        tools=tools,
    )


_REPLAY: dict[str, Callable[[ShadowCase, str], Replayed]] = {
    "remember": _replay_remember,
    "recall": _replay_recall,
}


# --- the decision -------------------------------------------------------------------------


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 3) if values else 0.0


def figures(candidate: SkillCandidate) -> dict[str, Any]:
    """Both versions side by side over the candidate's cases: verdicts confirmed / rejected /
    pending, mean model turns and model seconds (done cases), and the cases' counts."""
    cases = list(candidate.cases.select_related("run", "shadow"))
    done = [c for c in cases if c.status == "done"]
    judged = [c for c in done if c.run.verdict in ("confirm", "reject")]
    active_won = sum(c.run.verdict == "confirm" for c in judged)
    candidate_won = sum((c.run.verdict == "confirm") == bool(c.agrees) for c in judged)

    def side(won: int, runs: list[Run]) -> dict[str, Any]:
        return {
            "confirmed": won,
            "rejected": len(judged) - won,
            "pending": len(done) - len(judged),
            "turns": _mean([r.model_turns for r in runs]),
            "seconds": _mean([r.model_seconds for r in runs]),
        }

    return {
        "cases": len(cases),
        "done": len(done),
        "failed": sum(c.status == "failed" for c in cases),
        "judged": len(judged),
        "agreed": sum(bool(c.agrees) for c in done),
        "active": side(active_won, [c.run for c in done]),
        "candidate": side(candidate_won, [c.shadow for c in done]),
    }


def verdict_of(numbers: dict[str, Any]) -> tuple[bool, str]:
    """Does the candidate win? (won, why) — by verdicts with the margin, at no higher cost."""
    judged = numbers["judged"]
    active, candidate = numbers["active"], numbers["candidate"]
    if judged < settings.PROMOTE_MIN:
        return False, (
            f"too few verdicts: {judged} judged of {numbers['done']} shadow cases "
            f"(promotion needs {settings.PROMOTE_MIN})"
        )
    margin = (candidate["confirmed"] - active["confirmed"]) / judged
    score = (
        f"confirmed {candidate['confirmed']} of {judged} against the active version's "
        f"{active['confirmed']} (margin {margin:+.2f}, needs {settings.PROMOTE_MARGIN:+.2f})"
    )
    if margin < settings.PROMOTE_MARGIN:
        return False, f"did not win on verdicts: {score}"
    turns_bound = active["turns"] * (1 + settings.PROMOTE_TURNS_TOLERANCE)
    if candidate["turns"] > turns_bound:
        return False, (
            f"won on verdicts ({score}) but costs more: {candidate['turns']} model turns a case "
            f"against {active['turns']}"
        )
    seconds_bound = active["seconds"] * (1 + settings.PROMOTE_SECONDS_TOLERANCE)
    if candidate["seconds"] > seconds_bound:
        return False, (
            f"won on verdicts ({score}) but costs more: {candidate['seconds']} model seconds a "
            f"case against {active['seconds']}"
        )
    return True, (
        f"won on verdicts: {score}; cost {candidate['turns']} turns and "
        f"{candidate['seconds']} s a case against {active['turns']} and {active['seconds']}"
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
    """A verdict landed on a run: the candidates that replayed it are evaluated again."""
    try:
        for candidate in SkillCandidate.objects.filter(status="open", cases__run=run).distinct():
            evaluate(candidate)
    except Exception:
        log.exception("evolution: evaluating after the verdict on run %s failed", run.pk)


# --- the watch (periodic) -------------------------------------------------------------------

_WRITE_TASK = (
    "Задача — написать вторую версию навыка «{skill}»: она будет проверена в тени на настоящих "
    "запросах против действующей и заменит её, только если выиграет по вердиктам снаружи и не "
    "проиграет по цене. Промахи действующей версии (факты прогонов): {facts}. "
    "Текст действующей версии:\n\n{body}\n\n"
    "Запиши вторую версию инструментом write_candidate (skill, body, reason): body — полный "
    "текст навыка без заголовка front matter, reason — какой промах она исправляет."
)


def watch() -> dict[str, Any]:
    """The periodic task: evaluate open candidates; for a skill with a repeated miss and no
    candidate, ask the model to write one (when a model is configured and the day's cap allows);
    without a model the skills page shows the miss to staff."""
    report: dict[str, Any] = {"evaluated": {}, "missed": {}, "written": [], "abandoned": 0}
    # A case no worker took (the broker lost it, the worker died) stops holding the day's turns.
    stale = timezone.now() - timedelta(seconds=settings.RUN_STALE_SECONDS)
    for case in ShadowCase.objects.filter(status__in=("queued", "running"), created_at__lt=stale):
        _fail(case, "no worker finished this shadow case in time")
        report["abandoned"] += 1
    for name in sorted(skills_repo.active()):
        candidate = open_candidate(name)
        if candidate is not None:
            report["evaluated"][name] = evaluate(candidate)
            continue
        if not replayable(name):
            continue
        seen = misses(name)
        if not seen.repeated:
            continue
        report["missed"][name] = seen.reason()
        if model.configured() and turns_today() < settings.SHADOW_DAILY_TURNS:
            if _ask_model_to_write(name, seen) is not None:
                report["written"].append(name)
    return report


def _ask_model_to_write(skill: str, seen: Misses) -> SkillCandidate | None:
    runs = Run.objects.filter(pk__in=(seen.rejected + seen.empty + seen.costly)[:20])
    facts = [
        {
            "question": r.text[:300],
            "verdict": r.verdict,
            "verdict_note": r.verdict_note[:300],
            "found": r.found,
            "turns": r.model_turns,
        }
        for r in runs
    ]
    active = skills_repo.active()[skill]
    architect = runs.first().architect if runs.exists() else Architect.objects.first()
    if architect is None:
        return None
    writer = Run.objects.create(
        architect=architect,
        verb=EVOLVE,
        text=f"write a candidate for {skill}: {seen.reason()}",
        caller="memory",
        channel=SHADOW,
        owner=process_tag(),
    )
    usages: list[ModelResult] = []
    try:
        with _shadowing():
            result = model.backend().run(
                prompt=_WRITE_TASK.format(
                    skill=skill, facts=json.dumps(facts, ensure_ascii=False), body=active.body
                ),
                system=instruction.system_prompt((EVOLVE_SKILL,)),
                tools=ToolScope(
                    architect_id=architect.pk,
                    run_id=str(writer.pk),
                    tools=agent_tools.EVOLVE_TOOLS,
                ),
                thread=None,
                timeout=settings.MODEL_TURN_TIMEOUT,
            )
        usages.append(result)
    except ModelError as error:
        if error.usage is not None:
            usages.append(error.usage)
        run_close(writer, usages=usages, error=f"{error.code}: {error.message}", failed=True)
        return None
    run_close(
        writer,
        usages=usages,
        skills=[EVOLVE_SKILL],
        tools=list(ToolCall.objects.filter(run=writer).values_list("tool", flat=True)),
    )
    return open_candidate(skill)


# --- words for the page -------------------------------------------------------------------

STATUS_WORDS = {
    "open": Text(ru="измеряется", en="being measured"),
    "promoted": Text(ru="повышен", en="promoted"),
    "deleted": Text(ru="удалён", en="deleted"),
    "killed": Text(ru="снят персоналом", en="killed by staff"),
    "replaced": Text(ru="заменён новым текстом", en="replaced by a new text"),
}
