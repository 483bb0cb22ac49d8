"""The relearning cycle (PASSPORT.md §16, «Цикл дообучения»): one order, one code path, for a
research conclusion and a computed table alike — an expensive answer becomes a cheap one.

1. the result exists (``Result``: the question, the level that found it, the facts it rests on,
   the rows when it is a computation);
2. an artifact — a Markdown document, a table when the answer is a computation — goes to the
   object store → its id;
3. a short summary says what was found and where the detail lies (written by code from the
   facts, or by the model when it wrote one);
4. the summary goes to the vectors (``summaries``) → its id;
5. the summary goes to the graph (a chunk and the things it names) → its id;
6. the link table of the entity concerned is updated when one exists — skipping it never fails
   the cycle.

The summary is also a row of the relational store, indexed by its terms, so level 1 answers the
same question next time (``memory.knowledge.summaries``). The rows and the outbox items commit in one
transaction; ``sync`` delivers the stores before the answer leaves, ``async`` leaves them to the
outbox's worker (settings.RELEARNING).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from memory import language, model, ner
from memory import scope as scopes
from memory.agent import instruction
from memory.celery import enqueue
from memory.i18n import Text
from memory.knowledge import fill
from memory.knowledge import objects as objects_service
from memory.levels import graph as graph_level
from memory.levels import vectors as vectors_level
from memory.model.base import ModelError, ToolGrant
from memory.model.structured import ask_json
from memory.models import Architect, MemoryObject, Note, Run, Summary, SummaryKeyword, SummaryLink
from memory.services.evolution import measure, share
from memory.services.evolution.candidates import PATTERN_TASK
from memory.shadowing import in_shadow
from memory.shape import selectors
from memory.shape.physical import ROOT_TABLE
from memory.stores import outbox
from memory.stores.graph_types import (
    SUMMARY_CHUNK_PREFIX,
    Chunk,
    note_of_chunk,
    summary_chunk_id,
)
from memory.stores.vectors import VectorItem

log = logging.getLogger(__name__)

SKILL = "relearning-cycle"
# The summary's model call reads the cycle's skill, and the skill of the store whose answer it
# keeps when that level ran no model of its own (the graph's at level 3, the vectors' at 4):
# that call is where those skills reach a model, so where their candidates are measured.
_LEVEL_SKILL = {3: graph_level.SKILL, 4: vectors_level.SKILL}
SKILLS = (SKILL, *_LEVEL_SKILL.values())
FACTS_IN_SUMMARY = 3
FACT_CHARS = 200

_LEVEL = Text(
    ru="уровень {level}",
    en="level {level}",
)
_SUMMARY = Text(
    ru="На вопрос «{question}» память нашла ({level}, прогон {run}, {day}): {facts}. "
    "Подробно — объект {object}.",
    en="Asked «{question}», the memory found ({level}, run {run}, {day}): {facts}. "
    "The detail is object {object}.",
)
_DETAIL = Text(ru="Подробно — объект {object}.", en="The detail is object {object}.")
_MODEL_TASK = (
    "Задача — шаг 3 навыка relearning-cycle: напиши короткое саммари (два-три предложения) того, "
    "что память нашла на вопрос: что найдено и на чём основано (заметки и их дни). Без выдумок: "
    "только то, что в фактах. Если в том, как этот ответ добыт, видна закономерность, которая "
    "пригодится навыку в следующий раз, — верни её в pattern: lesson — одна строка для навыка, "
    "skill — имя навыка, которого она касается. Закономерность станет кандидатом навыка и будет "
    "проверена в тени; нет её — pattern не пиши."
)
_MODEL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["summary"],
    "properties": {
        "summary": {"type": "string"},
        "pattern": {
            "type": "object",
            "additionalProperties": False,
            "required": ["lesson"],
            "properties": {"skill": {"type": "string"}, "lesson": {"type": "string"}},
        },
    },
}
_FACT = Text(ru="«{text}» (заметка {note}, {day})", en="«{text}» (note {note}, {day})")
_FACT_BARE = Text(ru="«{text}»", en="«{text}»")
_ROWS = Text(
    ru="«{answer}»; расчёт — таблица из {rows} строк",
    en="«{answer}»; the computation is a table of {rows} rows",
)
_DOC_FOUND = Text(
    ru="Найдено на уровне {level}, прогон {run}, {day}.",
    en="Found at level {level}, run {run}, {day}.",
)
_DOC_HEAD = Text(ru="| # | Факт | Источник | Когда |", en="| # | Fact | Source | When |")
_DOC_ANSWER = Text(ru="## Ответ", en="## Answer")
_DOC_BASIS = Text(ru="## Основание", en="## Basis")
_NO_THINGS = Text(
    ru="в саммари не названо ни одной сущности — графу нечего связать",
    en="the summary names no things — nothing for the graph to link",
)
_NO_LINK = Text(
    ru="ни одна выращенная таблица не держит сущностей этого саммари ({names}) — шаг пропущен",
    en="no grown table holds the things this summary names ({names}) — the step is skipped",
)
_LINKED = Text(ru="связано со строками: {rows}", en="linked to the rows: {rows}")


@dataclass
class Result:
    """Step 1: what an expensive answer found."""

    question: str
    level: int
    kind: str
    text: str
    facts: list[dict[str, Any]] = field(default_factory=list)  # note, text, said_at, source
    scope: list[dict[str, Any]] = field(default_factory=list)
    rows: list[dict[str, Any]] | None = None  # a computation's table
    summary: str = ""  # the model's summary; empty → code writes it
    claim: str = "inferred"  # "denied": a hypothesis the architect rejected
    denies: Summary | None = None
    denied_run: Run | None = None


def from_outcome(
    *, question: str, level: int, outcome: Any, scope: Sequence[dict[str, Any]]
) -> Result | None:
    """The result a level's answer holds, or None when there is nothing new to keep: the answer
    came from a summary (it is already knowledge) or holds no fact."""
    if getattr(outcome, "computed", None):
        return Result(
            question=question,
            level=level,
            kind=outcome.kind or "affirmative",
            text=outcome.text,
            scope=list(scope),
            rows=list(outcome.computed),
        )
    data = outcome.data if isinstance(outcome.data, dict) else {}
    items = [i for i in data.get("hits", data.get("notes", [])) if isinstance(i, dict)]
    if not items and data.get("chunks"):
        items = _graph_facts(data["chunks"])
        if items is None:  # the graph answered from a summary's chunk: already knowledge
            return None
    answering = [i for i in items if i.get("answers", True)]
    if any(i.get("source") == "summaries" for i in answering[:1]):
        return None
    facts = [
        {
            "note": str(i["note"]) if i.get("note") else None,
            "text": str(i.get("text", "")),
            "said_at": i.get("created_at"),
            "source": i.get("source", "notes"),
            "id": str(i.get("id", "")),
        }
        for i in answering
        if i.get("text")
    ]
    if not facts:
        return None
    return Result(
        question=question,
        level=level,
        kind=outcome.kind or "probabilistic",
        text=outcome.text,
        facts=facts,
        scope=list(scope),
    )


def _graph_facts(chunks: Sequence[Any]) -> list[dict[str, Any]] | None:
    """Level 3's sources as facts: the notes its chunks came from (their text as the graph holds
    it). None when a chunk is a summary's (the answer rests on what was already learned)."""
    facts: list[dict[str, Any]] = []
    for chunk in chunks:
        if not isinstance(chunk, dict):
            continue
        if str(chunk.get("source") or "").startswith(SUMMARY_CHUNK_PREFIX):
            return None
        note = note_of_chunk(chunk.get("source"))
        if note and chunk.get("current", True):
            facts.append({"note": note, "source": "notes", "id": f"notes:{note}"})
    told = {str(n.pk): n for n in Note.objects.filter(pk__in=[f["note"] for f in facts])}
    return [
        {**f, "text": told[f["note"]].text, "created_at": told[f["note"]].created_at.isoformat()}
        for f in facts
        if f["note"] in told
    ]


def _day(moment: Any) -> str:
    return str(moment or "")[:10]


def _cell(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def artifact(result: Result, *, run: Run, lang: str) -> str:
    """Step 2's document: the question, the answer, the facts as a table (or the computed rows)."""
    day = _day(timezone.now().isoformat())
    lines = [
        f"# {_cell(result.question)}",
        "",
        _DOC_FOUND(lang, level=result.level, run=run.pk, day=day),
    ]
    lines += ["", _DOC_ANSWER(lang), "", result.text.strip(), "", _DOC_BASIS(lang), ""]
    if result.rows:
        columns = list(dict.fromkeys(k for row in result.rows for k in row))
        lines.append("| " + " | ".join(_cell(c) for c in columns) + " |")
        lines.append("|" + "---|" * len(columns))
        for row in result.rows:
            lines.append("| " + " | ".join(_cell(row.get(c, "")) for c in columns) + " |")
    else:
        lines += [_DOC_HEAD(lang), "|---|---|---|---|"]
        for i, fact in enumerate(result.facts, 1):
            source = f"{fact['source']} {fact['note'] or fact['id']}"
            lines.append(
                f"| {i} | {_cell(fact['text'])} | {_cell(source)} | {_day(fact['said_at'])} |"
            )
    return "\n".join(lines) + "\n"


def summary_text(result: Result, *, run: Run, object_id: str, lang: str) -> str:
    """Step 3, by code: the question, the facts found (with their notes and days), where the
    detail lies. A model's summary, when there is one, is used as it is."""
    if result.summary.strip():
        written = " ".join(result.summary.split())
        return written if object_id in written else f"{written} {_DETAIL(lang, object=object_id)}"
    if result.rows is not None:
        answer = " ".join(result.text.split())[:FACT_CHARS]
        facts = _ROWS(lang, answer=answer, rows=len(result.rows))
    else:
        shown = []
        for fact in result.facts[:FACTS_IN_SUMMARY]:
            text = " ".join(fact["text"].split())[:FACT_CHARS]
            if fact["note"]:
                shown.append(_FACT(lang, text=text, note=fact["note"], day=_day(fact["said_at"])))
            else:
                shown.append(_FACT_BARE(lang, text=text))
        facts = "; ".join(shown)
    return _SUMMARY(
        lang,
        question=" ".join(result.question.split()),
        level=_LEVEL(lang, level=result.level),
        run=run.pk,
        day=_day(timezone.now().isoformat()),
        facts=facts,
        object=object_id,
    )


def skills_for(level: int) -> tuple[str, ...]:
    """The skills the summary's model call reads for an answer found at this level."""
    return (SKILL, _LEVEL_SKILL[level]) if level in _LEVEL_SKILL else (SKILL,)


def _model_summary(
    result: Result, *, architect: Architect, run: Run, usages: list[Any] | None
) -> tuple[str, dict[str, str] | None]:
    """Step 3 by the model, when one is set (before the cycle's transaction: no lock is held
    during a model call), and the pattern it saw, if it saw one. Its failure is logged and the
    code writes the summary instead."""
    facts = [{k: f.get(k) for k in ("note", "text", "said_at")} for f in result.facts]
    prompt = "\n".join(
        [
            f"Вопрос: «{result.question}»",
            f"Уровень, на котором найден ответ: {result.level}",
            f"Ответ: {result.text[:2000]}",
            "Факты: " + json.dumps(facts or result.rows or [], ensure_ascii=False)[:6000],
        ]
    )
    try:
        value, used = ask_json(
            model.backend(),
            prompt=prompt,
            system=instruction.system_prompt(skills_for(result.level), extra=_MODEL_TASK),
            schema=_MODEL_SCHEMA,
            tools=ToolGrant(architect_id=architect.pk, run_id=str(run.pk), tools=()),
            thread=None,
            timeout=settings.MODEL_TURN_TIMEOUT,
        )
    except ModelError as error:
        log.warning("relearning: the model did not write the summary (%s); code writes it", error)
        if usages is not None and error.usage is not None:
            usages.append(error.usage)  # a failed call is counted on the run all the same
        return "", None
    if usages is not None:
        usages.append(used)
    pattern = value.get("pattern") or {}
    lesson = " ".join(str(pattern.get("lesson") or "").split())
    seen = {"skill": str(pattern.get("skill") or SKILL).strip(), "lesson": lesson}
    return str(value.get("summary") or ""), seen if lesson else None


def replay_request(result: Result) -> dict[str, Any]:
    """What the shadow needs to write this result's summary again (``summarize_again``)."""
    return {
        "question": result.question,
        "level": result.level,
        "kind": result.kind,
        "text": result.text,
        "facts": result.facts,
        "scope": result.scope,
        "rows": result.rows,
    }


def offer(run: Run, result: Result, *, lang: str) -> None:
    """After the run closed, offer the summary the cycle's model wrote to the shadow: a
    candidate of the skills that call read (``skills_for``) may replay it. The one way for every
    level that relearns — a recall's answer at level 2, 3 or 4, and the research at level 5."""
    share.offer(
        run,
        call=share.RELEARNING,
        request={"result": replay_request(result), "lang": lang},
        answer=measure.brief(found=bool(result.summary.strip()), text=result.summary),
        skills=skills_for(result.level),
    )


def summarize_again(run: Run, request: dict[str, Any]) -> tuple[str, list[Any]]:
    """Step 3 once more, for a shadow run (memory.services.evolution): the model writes the
    summary of the same result; nothing is kept, and a pattern it sees opens nothing."""
    result = Result(**request["result"])
    usages: list[Any] = []
    summary, _ = _model_summary(result, architect=run.architect, run=run, usages=usages)
    return summary, usages


def meaning_text(result: Result) -> str:
    """What the summary's vector is made of: what was found — the facts, or the computed answer —
    never the question's wording. Questions of one shape ("which of my friends could have
    met X?") sit close together by meaning, and a summary carrying its question would answer
    the next such question about somebody else (measured: bench/relearning.py --research)."""
    if result.rows is not None or not result.facts:
        return result.text
    return "\n".join(f["text"] for f in result.facts)


def _graph_items(summary: Summary, result: Result, run: Run, lang: str) -> tuple[list[Any], str]:
    """Step 5: the summary as a chunk, linked to the things it names (natasha / the English
    rules, as for notes); no things → no insert, with the reason."""
    named = fill.named_by_ner(f"{result.question}. {summary.text}")
    chunk = Chunk(id=summary_chunk_id(summary.pk), content=summary.text)
    entities = fill.entities_of(named, chunk)
    if not entities:
        return [], _NO_THINGS(lang)
    item = outbox.graph_insert(
        architect=summary.architect, chunks=[chunk], entities=entities, relations=[], run=run
    )
    return [item], ""


def _link(summary: Summary, result: Result, lang: str) -> dict[str, Any]:
    """Step 6: the rows of the grown tables that hold a thing the summary is about (its facts'
    and its question's named things) get a link to it. None found: skipped, never a failure."""
    texts = [result.question, *(f["text"] for f in result.facts)]
    names = {n.name for text in texts for n in ner.entities(text)}
    names |= {str(f["entity"]) for f in result.facts if f.get("entity")}
    rows: dict[tuple[str, int], str] = {}
    for name in sorted(names):
        lemmas = set(language.keywords(name))
        if not lemmas:
            continue
        for hit in selectors.value_hits(summary.architect, sorted(lemmas)):
            if hit.entry.table != ROOT_TABLE and lemmas <= hit.lemmas:
                rows.setdefault((hit.entry.table, hit.row), name)
    if not rows:
        shown = ", ".join(sorted(names)) or "—"
        return {"status": "skipped", "items": 0, "note": _NO_LINK(lang, names=shown)}
    SummaryLink.objects.bulk_create(
        [
            SummaryLink(
                architect=summary.architect, summary=summary, table=table, row=row, entity=name
            )
            for (table, row), name in rows.items()
        ],
        ignore_conflicts=True,
    )
    shown = ", ".join(f"{name} ({table}#{row})" for (table, row), name in rows.items())
    return {"status": "written", "items": len(rows), "note": _LINKED(lang, rows=shown)}


@transaction.atomic
def _keep(
    result: Result, *, architect: Architect, run: Run, lang: str
) -> tuple[Summary, dict[str, list[Any]], str, dict[str, Any]]:
    document = artifact(result, run=run, lang=lang)
    obj, object_item = objects_service.object_keep(
        architect=architect,
        name=f"answer-{run.pk}.md",
        media_type="text/markdown",
        content=document.encode("utf-8"),
        description=result.question,
        origin="answer",
        run=run,
        scope=result.scope,
    )
    text = summary_text(result, run=run, object_id=str(obj.pk), lang=lang)
    MemoryObject.objects.filter(pk=obj.pk).update(summary=text)
    summary = Summary.objects.create(
        architect=architect,
        run=run,
        question=result.question,
        text=text,
        level=result.level,
        kind=result.kind,
        scope=result.scope,
        basis=result.facts,
        object=obj,
        written_by="model" if result.summary.strip() and result.claim == "inferred" else "code",
        claim=result.claim,
        denies=result.denies,
        denied_run=result.denied_run,
    )
    terms = language.keywords(f"{result.question} {text}")
    SummaryKeyword.objects.bulk_create(
        [SummaryKeyword(architect=architect, summary=summary, lemma=t[:64]) for t in terms]
    )
    vector_item = outbox.vectors_add(
        architect=architect,
        kind="summaries",
        items=[
            VectorItem(
                id=str(summary.pk),
                text=meaning_text(result),
                payload={
                    "summary": str(summary.pk),
                    "text": text,
                    "run": str(run.pk),
                    "object": str(obj.pk),
                    "created_at": summary.created_at.isoformat(),
                    "scope": result.scope,
                    "places": scopes.places(result.scope),
                },
            )
        ],
        run=run,
    )
    graph_items, graph_note = _graph_items(summary, result, run, lang)
    link = _link(summary, result, lang)
    return (
        summary,
        {"object": [object_item], "vectors": [vector_item], "graph": graph_items},
        graph_note,
        link,
    )


def relearn(
    result: Result,
    *,
    architect: Architect,
    run: Run,
    lang: str,
    mode: str | None = None,
    usages: list[Any] | None = None,
) -> dict[str, Any]:
    """Run steps 2–6; return what went where (every id), for the answer and the run.

    The rows commit in one transaction with their outbox items; ``sync`` then delivers them
    (a store that does not answer leaves its item queued, never an error), ``async`` hands them
    to the outbox's worker."""
    mode = mode or settings.RELEARNING
    pattern = None
    if not result.summary.strip() and result.claim == "inferred" and model.configured():
        result.summary, pattern = _model_summary(
            result, architect=architect, run=run, usages=usages
        )
    summary, steps, graph_note, link = _keep(result, architect=architect, run=run, lang=lang)
    if pattern is not None and not in_shadow():
        # The pattern becomes a candidate of its skill on Celery, after this commits: a commit
        # of the skills repository never runs inside the request.
        enqueue(PATTERN_TASK, pattern["skill"], pattern["lesson"], str(run.pk))
    stores: dict[str, dict[str, Any]] = {}
    for step, items in steps.items():  # each step's own status (the card's vector is step 2's)
        if not items:
            continue
        if mode == "sync":
            stores[step] = fill.deliver(items, now=True)[items[0].store]
        else:
            stores[step] = {"status": "queued", "items": len(items)}
    if mode != "sync":
        transaction.on_commit(lambda: outbox.hand_over(delay=0.0))
    graph = stores.get("graph") or {"status": "skipped", "items": 0, "note": graph_note}
    return {
        "skill": SKILL,
        "mode": mode,
        "summary": str(summary.pk),
        "text": summary.text,
        "written_by": summary.written_by,
        "object": str(summary.object_id),
        "vectors": {"id": str(summary.pk), **stores.get("vectors", {})},
        "graph": {"id": summary_chunk_id(summary.pk) if "graph" in stores else None, **graph},
        "link": link,
    }


def failed(error: BaseException, mode: str | None = None) -> dict[str, Any]:
    """What the answer says of a cycle that broke (after the answer was ready: never an error
    answer); the transaction kept nothing of it."""
    return {
        "skill": SKILL,
        "mode": mode or settings.RELEARNING,
        "status": "failed",
        "note": f"{getattr(error, 'code', type(error).__name__)}: {error}"[:1000],
    }
