"""recall: climb the ladder from the cheapest level, stop at the first that answers."""

from __future__ import annotations

import logging
import time
from typing import Any

from django.conf import settings

from memory import ladder
from memory.auth import Caller
from memory.i18n import Text
from memory.levels import RecallContext, steps_for
from memory.levels import previous as previous_service
from memory.levels import research as research_level
from memory.models import Research, Summary
from memory.services import relearning
from memory.services.cycle import frame, guarded, open_run, read_params, take_verdict
from memory.services.evolution import measure, share
from memory.services.research import job as research_job
from memory.services.runs import run_close
from memory.stores.graph_types import note_of_chunk

log = logging.getLogger(__name__)

_CAPPED = Text(
    ru="этот ключ разрешает глубину до {cap}; просили {asked}, выполнено как {granted}",
    en="this key allows depth up to {cap}; asked {asked}, ran as {granted}",
)
_SKIPPED = Text(ru="уровень {level} пропущен: {reason}", en="level {level} skipped: {reason}")
_NOT_FOUND = Text(
    ru="В памяти ничего не найдено (пройдено уровней: {used} из {top} разрешённых).",
    en="Nothing found in memory (levels run: {used} of {top} allowed).",
)
_NO_RESEARCH = Text(
    ru="ждать нечего: исследование (уровень 5) не начиналось — оно идёт только на depth "
    "extreme, когда уровни 1–4 не нашли ответа",
    en="nothing to wait for: no research (level 5) was started — it runs only at depth extreme, "
    "when levels 1–4 found no answer",
)
_CANDIDATES = Text(
    ru="Ниже порога ответа, но, возможно, относится к вопросу ({count}):",
    en="Below the answer bar, but possibly related ({count}):",
)


def recall(*, caller: Caller, data: Any) -> dict[str, Any]:
    started = time.perf_counter()
    parsed = read_params("recall", data)
    run = open_run("recall", parsed, caller)
    with guarded(run):
        return _recall(parsed, caller, run, started)


def _recall(parsed: Any, caller: Caller, run: Any, started: float) -> dict[str, Any]:
    """The verb's steps, in order: the verdict it carries, the context, the climb, the fates of
    depth/previous_results/wait, the answer, the research's state, relearning, the run's close,
    and the shadow offer."""
    take_verdict(parsed, caller, run)
    grant = ladder.grant_depth(parsed.get("depth", ladder.DEFAULT_DEPTH), caller.depth_cap)
    ctx = _context(parsed, caller, run)
    # Reading a job already paid for costs nothing: it is reported at any depth.
    top = ladder.top_level("extreme") if ctx.research_named is not None else grant.top_level
    climb = ladder.climb(steps_for(ctx, start_research=research_job.start), top=top, lang=ctx.lang)
    _accept_fates(parsed, ctx, grant, climb)
    answer = _answer(parsed, run, grant, climb)
    usages = [o.usage for o in climb.outcomes if o.usage is not None]
    by_research = _research_state(answer, ctx, climb.final)
    kept = None  # the relearning cycle's result, when its model wrote the summary
    if climb.final is not None and not by_research:
        if climb.depth_used >= settings.RELEARN_FROM_LEVEL or climb.final.computed:
            relearned, kept = _relearn(parsed, caller, run, climb.final, climb.depth_used, usages)
            if relearned is not None:
                answer["relearned"] = relearned
    answer["seconds"] = round(time.perf_counter() - started, 4)
    closed = _close_quietly(
        run,
        usages=usages,
        depth_asked=grant.asked,
        depth_granted=grant.granted,
        depth_used=climb.depth_used,
        kind=answer["kind"],
        found=climb.final is not None,
        thread=answer.get("thread", ""),
        seconds=answer["seconds"],
        stores=sorted({e.store for e in climb.report if e.status != "skipped"}),
        tools=sorted({t for o in climb.outcomes for t in o.tools}),
        skills=sorted(
            {s for o in climb.outcomes for s in o.skills}
            | ({relearning.SKILL} if "relearned" in answer else set())
            | set(relearning.skills_for(kept.level) if kept is not None else ())
        ),
        relearned=answer.get("relearned", {}),
        returned=_returned_ids(answer["answer"]),
        params=answer["params"],
        report=answer["report"],
    )
    if closed and usages:  # a model ran: a candidate of its skills may replay this request
        share.offer(
            run,
            request={
                "text": ctx.text,
                "scope": ctx.scope,
                "lang": ctx.lang,
                "top": min(climb.depth_used, 4),
                "asked_at": run.created_at.isoformat(),
                "thread": parsed.get("thread") or "",
            },
            answer=lambda: answer_brief(climb.final),
            skills=sorted({s for o in climb.outcomes for s in o.skills} - {research_level.SKILL}),
        )
    if closed and kept is not None:  # the cycle's summary was the model's: replayable too
        relearning.offer(run, kept, lang=ctx.lang)
    return answer


def _context(parsed: Any, caller: Caller, run: Any) -> RecallContext:
    previous = None
    if parsed.has("previous_results"):
        previous = previous_service.read(
            parsed.get("previous_results"), architect=caller.architect, question=parsed.get("text")
        )
    return RecallContext.of(
        architect=caller.architect,
        text=parsed.get("text"),
        scope=parsed.get("scope", []),
        lang=parsed.lang,
        run=run,
        previous=previous,
        wait=bool(parsed.get("wait", False)),
    )


def _accept_fates(parsed: Any, ctx: RecallContext, grant: Any, climb: ladder.Climb) -> None:
    """What became of depth, previous_results and wait, in the caller's language."""
    lang = ctx.lang
    if ctx.previous is not None:
        parsed.accept("previous_results", ctx.previous.note(lang))
    if parsed.has("wait"):
        parsed.accept("wait", "" if ctx.research is not None else _NO_RESEARCH(lang))
    if parsed.has("depth"):
        notes = []
        if grant.capped:
            notes.append(_CAPPED(lang, cap=grant.cap, asked=grant.asked, granted=grant.granted))
        notes += [
            _SKIPPED(lang, level=e.level, reason=e.note)
            for e in climb.report
            if e.status == "skipped"
        ]
        parsed.accept("depth", "; ".join(notes))


def _answer(parsed: Any, run: Any, grant: Any, climb: ladder.Climb) -> dict[str, Any]:
    """The answer object: what was found (with the lower levels' candidates after it), or that
    nothing was, with the candidates below the bar; the report, missing, fates, trace, thread."""
    lang = parsed.lang
    final = climb.final
    if final is not None:
        kind = final.kind or "probabilistic"
        answer_body: dict[str, Any] = {"form": final.form, "found": True, "text": final.text}
        if final.data is not None:
            answer_body["data"] = final.data
        if final.object is not None:
            answer_body["object"] = final.object
        # What the levels below the answering one ranked but did not answer with comes along,
        # after the answer, for the caller to weigh (the answer's own items left out).
        others = climb.candidates(exclude=_answer_ids(final.data))
        if others and isinstance(final.data, dict):
            answer_body["data"] = {**final.data, "candidates": others}
        missing = final.missing
    else:
        # Absence is not certainty: a level not run, or not allowed, might still know. What
        # fell below the answer bar is handed over as candidates, ranked, never as an answer.
        kind = "probabilistic"
        text = _NOT_FOUND(lang, used=climb.depth_used, top=grant.top_level)
        answer_body = {"form": "text", "found": False, "text": text}
        candidates = climb.candidates()
        if candidates:
            answer_body["text"] = "\n".join(
                [text, _CANDIDATES(lang, count=len(candidates))]
                + [f"{i}. «{c['text'][:400]}» ({c['source']})" for i, c in enumerate(candidates, 1)]
            )
            answer_body["data"] = {"candidates": candidates}
        missing = []
    answer: dict[str, Any] = {
        **frame("recall", run),
        "kind": kind,
        "answer": answer_body,
        "depth_used": climb.depth_used,
        "report": [entry.as_dict() for entry in climb.report],
        "missing": missing,
        "params": parsed.fates_dict(),
    }
    if parsed.get("trace"):
        answer["trace"] = climb.trace
    thread = next((o.thread for o in reversed(climb.outcomes) if o.thread), "")
    if thread:
        answer["thread"] = thread
    return answer


def _research_state(answer: dict[str, Any], ctx: RecallContext, final: Any) -> bool:
    """The research job's state beside the answer, and what the job kept when it answered
    (it relearns by itself). True when the answer is the job's."""
    research = ctx.research
    if research is None:
        return False
    research = Research.objects.filter(pk=research.pk).first() or research
    answer["research"] = research_job.state(research)
    if final is None and research.status in ("queued", "running"):
        answer["answer"]["text"] += "\n" + research_level.outcome(research, ctx.lang).report[0].note
    by_research = final is not None and bool(final.report) and final.report[0].level == 5
    if by_research and research.relearned:
        answer["relearned"] = research.relearned
    return by_research


def answer_brief(final: Any) -> dict[str, Any]:
    """An answer in brief for the shadow test: found or not, its ids, its words."""
    if final is None:
        return measure.brief(found=False)
    ids = sorted(_answer_ids(final.data))
    if isinstance(final.object, dict):
        ids.append(f"objects:{final.object.get('id')}")
    return measure.brief(found=True, ids=ids, text=final.text)


def climb_again(run: Any, request: dict[str, Any]) -> tuple[Any, list[Any], list[str]]:
    """Levels 1–4 of a recall once more, for a shadow run (memory.services.evolution), up to the
    level the real run reached: no research is started, nothing is relearned, nothing closed."""
    ctx = RecallContext.of(
        architect=run.architect,
        text=request["text"],
        scope=request.get("scope", []),
        lang=request.get("lang", settings.MEMORY_LANG),
        run=run,
    )
    # The memory as the real request saw it: a summary learned since (by that very run, say) is
    # not there, or the candidate would answer from it at level 1 and never run.
    if request.get("asked_at"):
        learned = Summary.objects.filter(
            architect=run.architect, created_at__gte=request["asked_at"]
        ).values_list("pk", flat=True)
        ctx.unseen = frozenset(f"summaries:{pk}" for pk in learned)
    climb = ladder.climb(
        steps_for(ctx, start_research=research_job.start),
        top=min(int(request.get("top", 4)), 4),
        lang=ctx.lang,
    )
    usages = [o.usage for o in climb.outcomes if o.usage is not None]
    return climb.final, usages, sorted({t for o in climb.outcomes for t in o.tools})


def _relearn(
    parsed: Any, caller: Caller, run: Any, final: Any, level: int, usages: list[Any]
) -> tuple[dict[str, Any] | None, relearning.Result | None]:
    """Keep what an expensive answer found, so the same question is cheap next time. The answer
    is ready: a cycle that breaks is reported in it, never turned into an error answer. With
    what was kept: the result, when the model wrote its summary (a shadow may replay that)."""
    if settings.RELEARNING == "off":
        return None, None
    result = relearning.from_outcome(
        question=parsed.get("text"), level=level, outcome=final, scope=parsed.get("scope", [])
    )
    if result is None:
        return None, None
    try:
        kept = relearning.relearn(
            result, architect=caller.architect, run=run, lang=parsed.lang, usages=usages
        )
    except Exception as error:
        log.exception("recall: the relearning cycle of run %s failed", run.pk)
        return relearning.failed(error), None
    return kept, result if kept.get("written_by") == "model" else None


def _returned_ids(body: dict[str, Any]) -> list[str]:
    """Every id the answer handed over (answer and candidates), for ``previous_results``."""
    ids = _ids_in(body.get("data"), ("notes", "hits", "candidates", "summaries"))
    if isinstance(body.get("object"), dict):
        ids.append(f"objects:{body['object']['id']}")
    return list(dict.fromkeys(ids))


def _answer_ids(data: Any) -> set[str]:
    return set(_ids_in(data, ("notes", "hits")))


def _ids_in(data: Any, keys: tuple[str, ...]) -> list[str]:
    """The ids the lists ``keys`` of an answer's data hold (a note by its note id, anything
    else by its own), and the notes its graph chunks came from."""
    if not isinstance(data, dict):
        return []
    ids = [
        str(item.get("note") or item.get("id"))
        for key in keys
        for item in data.get(key, [])
        if isinstance(item, dict) and (item.get("note") or item.get("id"))
    ]
    return ids + [n for n in (note_of_chunk(c.get("source")) for c in data.get("chunks", [])) if n]


def _close_quietly(run: Any, **facts: Any) -> bool:
    """The answer is ready: a failure to record its facts (the database busy, say) is logged
    and left to the sweep, never turned into an error answer."""
    try:
        run_close(run, **facts)
    except Exception:
        log.exception("recall: closing run %s failed; the answer is given all the same", run.pk)
        return False
    return True
