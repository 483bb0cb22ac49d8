"""The shadow replay (Celery's side of the evolution): one real request replayed with the
candidate on a run of the ``shadow`` channel, its answer compared with the real one and
forgotten; and the periodic watch that decides open candidates and asks the model to write one
for a skill that misses repeatedly. It replays the verbs, so it sits above them."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from memory import model
from memory.agent import instruction, skills_repo
from memory.agent import tools as agent_tools
from memory.levels import model as model_level
from memory.levels.research import SKILL as RESEARCH_SKILL
from memory.model.base import ModelError, ModelResult, ToolGrant
from memory.models import Architect, Run, ShadowCase, SkillCandidate, ToolCall
from memory.models.runs import EVOLVE, SHADOW
from memory.services import recall as recall_service
from memory.services import relearning
from memory.services import remember as remember_service
from memory.services.evolution import share
from memory.services.evolution.candidates import evaluate, open_candidate
from memory.services.evolution.measure import Misses, agree, brief, misses, writes_of
from memory.services.evolution.share import REPLAYABLE, replayable, turns_today
from memory.services.research import job as research
from memory.services.runs import process_tag, run_close
from memory.shadowing import shadowing

log = logging.getLogger(__name__)

EVOLVE_SKILL = "evolve-skill"

# The skills a shadow run can replay, by the model call that reads them — taken from the
# modules that make those calls, never listed twice: remember's turn, level 2 (the tables' and
# the graph's skills: ask_graph is among its tools), level 5, the relearning cycle's summary
# (its own skill, and the graph's or the vectors' for an answer of level 3 or 4: those levels
# run no model, so this is where their skills reach one), and the model writing a candidate.
REPLAYABLE.update(
    {
        share.REMEMBER: tuple(remember_service.SKILLS),
        share.RECALL: tuple(model_level.SKILLS),
        share.RESEARCH: (RESEARCH_SKILL,),
        share.RELEARNING: tuple(relearning.SKILLS),
        share.EVOLVE: (EVOLVE_SKILL,),
    }
)


@dataclass
class ShadowAnswer:
    answer: dict[str, Any]
    usages: list[Any] = field(default_factory=list)
    found: bool | None = False
    tools: list[str] = field(default_factory=list)


def conduct(case_id: int) -> ShadowCase | None:
    """ShadowAnswer one case with the candidate and record the facts on its shadow run. Idempotent: a
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
        with instruction.trying({skill: current}), shadowing():
            replayed = _REPLAY[_call_of(case, skill)](case, skill)
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


def _replay_remember(case: ShadowCase, skill: str) -> ShadowAnswer:
    usage = remember_service.think_again(case.shadow, case.request)
    return ShadowAnswer(
        answer=writes_of(case.shadow),
        usages=[usage],
        found=None,  # a remember finds nothing; what it wrote is its answer
        tools=list(ToolCall.objects.filter(run=case.shadow).values_list("tool", flat=True)),
    )


def _call_of(case: ShadowCase, skill: str) -> str:
    """The model call the case replays, as its offer named it (a case queued before calls were
    named: the research for deep-analysis, else the run's verb)."""
    named = case.request.get("call")
    if named:
        return str(named)
    return share.RESEARCH if skill == RESEARCH_SKILL else case.run.verb


def _replay_research(case: ShadowCase, skill: str) -> ShadowAnswer:
    found, usages = research.investigate_again(case.shadow, case.request)
    return ShadowAnswer(
        answer=brief(found=found.found, ids=[b["note"] for b in found.basis], text=found.text),
        usages=usages,
        found=found.found,
        tools=list(ToolCall.objects.filter(run=case.shadow).values_list("tool", flat=True)),
    )


def _replay_recall(case: ShadowCase, skill: str) -> ShadowAnswer:
    final, usages, tools = recall_service.climb_again(case.shadow, case.request)
    return ShadowAnswer(
        answer=recall_service.answer_brief(final),
        usages=usages,
        found=final is not None,
        tools=tools,
    )


def _replay_relearning(case: ShadowCase, skill: str) -> ShadowAnswer:
    """The relearning cycle's summary written again from the same result: nothing is kept."""
    summary, usages = relearning.summarize_again(case.shadow, case.request)
    return ShadowAnswer(
        answer=brief(found=bool(summary.strip()), text=summary),
        usages=usages,
        found=bool(summary.strip()),
    )


def _replay_evolve(case: ShadowCase, skill: str) -> ShadowAnswer:
    """The model's candidate-writing turn again, on the same facts: its tools write nothing in
    a replay (the calls are recorded, what they would have written is the answer)."""
    result = _write_turn(case.shadow, case.request["text"])
    written = written_by(case.shadow)
    return ShadowAnswer(
        answer=written,
        usages=[result],
        found=written["found"],
        tools=list(ToolCall.objects.filter(run=case.shadow).values_list("tool", flat=True)),
    )


def written_by(writer: Run) -> dict[str, Any]:
    """A candidate-writing turn's answer in brief: the texts its tools wrote (or, replayed,
    would have written) — second versions, new skills, instruction lines."""
    texts = [
        " ".join(
            str((call.arguments or {}).get(key, ""))
            for key in ("skill", "name", "beside", "body", "lines")
        )
        for call in ToolCall.objects.filter(run=writer, error="").order_by("pk")
        if call.tool in agent_tools.EVOLVE_TOOLS
    ]
    return brief(found=bool(texts), text="\n".join(texts))


_REPLAY: dict[str, Callable[[ShadowCase, str], ShadowAnswer]] = {
    share.REMEMBER: _replay_remember,
    share.RECALL: _replay_recall,
    share.RESEARCH: _replay_research,
    share.RELEARNING: _replay_relearning,
    share.EVOLVE: _replay_evolve,
}


_WRITE_TASK = (
    "Задача — написать вторую версию навыка «{skill}»: она будет проверена в тени на настоящих "
    "запросах против действующей и заменит её, только если выиграет по вердиктам снаружи и не "
    "проиграет по цене. Промахи действующей версии (факты прогонов): {facts}. "
    "Текст действующей версии:\n\n{body}\n\n"
    "Запиши вторую версию инструментом write_candidate (skill, body, reason): body — полный "
    "текст навыка без заголовка front matter, reason — какой промах она исправляет. Если промах "
    "не в тексте этого навыка, а в том, чего нет, — предложи новый навык (propose_skill) или "
    "новые строки инструкции (propose_instruction): это тоже кандидаты, их проверит тень."
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
    for name in sorted(skills_repo.proposed()):  # a new skill or the instruction's lines
        candidate = open_candidate(name)
        if candidate is not None:
            report["evaluated"][name] = evaluate(candidate)
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
    prompt = _WRITE_TASK.format(
        skill=skill, facts=json.dumps(facts, ensure_ascii=False), body=active.body
    )
    writer = Run.objects.create(
        architect=architect,
        verb=EVOLVE,
        text=f"write a candidate for {skill}: {seen.reason()}",
        caller="memory",
        channel=SHADOW,
        process=process_tag(),
    )
    try:
        result = _write_turn(writer, prompt)
    except ModelError as error:
        usages = [error.usage] if error.usage is not None else []
        run_close(writer, usages=usages, error=f"{error.code}: {error.message}", failed=True)
        return None
    run_close(
        writer,
        usages=[result],
        skills=[EVOLVE_SKILL],
        tools=list(ToolCall.objects.filter(run=writer).values_list("tool", flat=True)),
    )
    # The writing turn is evolve-skill's call: a candidate of evolve-skill replays it.
    share.offer(
        writer,
        call=share.EVOLVE,
        request={"text": prompt, "skill": skill},
        answer=lambda: written_by(writer),
        skills=[EVOLVE_SKILL],
    )
    return open_candidate(skill)


def _write_turn(writer: Run, prompt: str) -> ModelResult:
    """One turn of the model by evolve-skill, its only tools those that write candidates."""
    with shadowing():
        return model.backend().run(
            prompt=prompt,
            system=instruction.system_prompt((EVOLVE_SKILL,)),
            tools=ToolGrant(
                architect_id=writer.architect_id,
                run_id=str(writer.pk),
                tools=agent_tools.EVOLVE_TOOLS,
            ),
            thread=None,
            timeout=settings.MODEL_TURN_TIMEOUT,
        )
